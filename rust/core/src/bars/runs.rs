//! The fold's fast path: a run of consecutive buckets that are closed, inside one observed
//! span and complete (every input of the finer grid present). Such buckets are all served and
//! none withheld, whatever the channel, so they need none of the per-bucket rule checks: the
//! run is found with a few probes and aggregated column by column over fixed-size chunks.
//! Anything else (a gap, an outage, the open bucket) goes through the per-bucket walk in
//! fold.rs, so the result is the same bar for bar.

use super::derived::{sum_volume, Derived};
use super::{BarsError, BarsView, Coverage};

/// How many buckets from the one `[start, start + step)` (whose inputs start at index `i`)
/// form a complete run; 0 when the first bucket is not complete and covered. Covered implies
/// closed: the watermark is the end of the newest span, so no span reaches past it.
///
/// The inputs close on a grid of `step / per` and strictly increase, and the first one
/// closes after `start`; so the `m * per`-th input closing at `start + m * step` means every
/// input in between is there. That makes completeness monotone in `m` (true up to the first
/// bucket missing an input), so the longest run is found by a binary search over a few
/// probes of `ts` rather than by reading it all.
pub(super) fn complete_run(
    ts: &[u64],
    i: usize,
    per: usize,
    start: u64,
    step: u64,
    coverage: &Coverage,
) -> usize {
    let complete = |m: usize| ts.get(i + m * per - 1) == Some(&(start + m as u64 * step));
    // Cheapest test first: after a gap the per-bucket walk takes over without a search.
    if !complete(1) {
        return 0;
    }
    let covered = coverage.covered_until(start).unwrap_or(start);
    let most = usize::try_from((covered - start) / step)
        .unwrap_or(usize::MAX)
        .min((ts.len() - i) / per);
    if most == 0 {
        return 0;
    }
    if complete(most) {
        return most;
    }
    let (mut good, mut bad) = (1, most);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if complete(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// Append the `m` bars of a complete run: inputs `i..i + m * per`, the first bucket closing at
/// `first_end`.
///
/// # Errors
/// [`BarsError::VolumeOverflow`] naming the first bucket whose volume does not fit.
pub(super) fn emit_run(
    out: &mut Derived,
    view: &BarsView<'_>,
    i: usize,
    per: usize,
    m: usize,
    first_end: u64,
    step: u64,
) -> Result<(), BarsError> {
    let j = i + m * per;
    let before = out.volume.len();
    out.ts_event
        .extend((0..m as u64).map(|k| first_end + k * step));
    // The chunk lengths of a fold_many cascade (5m from 1m, 15m from 5m, ...) as constants:
    // each arm is the same kernel with its chunks reduced in straight-line code.
    let overflow = match per {
        2 => chunked::<2>(out, view, i, j, per),
        3 => chunked::<3>(out, view, i, j, per),
        4 => chunked::<4>(out, view, i, j, per),
        5 => chunked::<5>(out, view, i, j, per),
        6 => chunked::<6>(out, view, i, j, per),
        // 15m and 30m from the minutes gain too; longer chunks (1h: 60) run as fast without.
        15 => chunked::<15>(out, view, i, j, per),
        30 => chunked::<30>(out, view, i, j, per),
        _ => chunked::<0>(out, view, i, j, per),
    };
    if overflow {
        // A refused sum was written as -1 (real sums are non-negative): name its bucket.
        let k = out.volume[before..]
            .iter()
            .position(|&v| v < 0)
            .unwrap_or(0);
        return Err(BarsError::VolumeOverflow {
            ts_event: first_end + k as u64 * step,
        });
    }
    Ok(())
}

/// Aggregate inputs `i..j` in chunks of `per` (equal to `N` unless `N` is 0), one column at a
/// time, each pass a simple stream; returns whether some chunk's volume overflowed.
fn chunked<'a, const N: usize>(
    out: &mut Derived,
    view: &BarsView<'a>,
    i: usize,
    j: usize,
    per: usize,
) -> bool {
    // Re-slicing each chunk to `..per` gives it a length known at compile time when N is,
    // even where the compiler does not inline the `extend` that runs the closure.
    let per = if N > 0 { N } else { per };
    let chunks = |column: &'a [i64]| column[i..j].chunks_exact(per).map(move |c| &c[..per]);
    out.open.extend(chunks(view.open).map(|c| c[0]));
    out.high
        .extend(chunks(view.high).map(|c| reduce(c, i64::MIN, i64::max)));
    out.low
        .extend(chunks(view.low).map(|c| reduce(c, i64::MAX, i64::min)));
    out.close.extend(chunks(view.close).map(|c| c[per - 1]));
    // Volumes are summed wrapping, with the OR of them all kept beside: every chunk sum is
    // at most `per` times the largest volume, itself at most that OR, so when `OR * per` fits
    // i64 no sum can have wrapped and the one check covers the whole run. Only runs holding
    // volumes near 2^63 / per are summed again, exactly (the sums are then refused or kept).
    let mut or_all = 0u64;
    let before = out.volume.len();
    out.volume.extend(chunks(view.volume).map(|c| {
        c.iter().fold(0i64, |sum, &v| {
            or_all |= v as u64;
            sum.wrapping_add(v)
        })
    }));
    let overflow = if u128::from(or_all) * per as u128 > i64::MAX as u128 {
        out.volume.truncate(before);
        let mut overflow = false;
        out.volume
            .extend(chunks(view.volume).map(|c| match sum_volume(c) {
                Some(v) => v,
                None => {
                    overflow = true;
                    -1
                }
            }));
        overflow
    } else {
        false
    };
    if let Some(sequence) = view.sequence {
        out.sequence.extend(
            sequence[i..j]
                .chunks_exact(per)
                .map(|c| reduce(&c[..per], 0, u64::max)),
        );
    }
    overflow
}

/// `f` over a chunk with four independent accumulators. A plain fold of `max` or `min` over
/// 64-bit integers is vectorised with an emulated compare (baseline x86-64 has none for 64-bit
/// lanes) that is slower than these four scalar chains; for the short constant chunks
/// of a cascade this unrolls to the same straight-line code as a fold.
#[inline(always)]
fn reduce<T: Copy>(chunk: &[T], init: T, f: impl Fn(T, T) -> T) -> T {
    let mut acc = [init; 4];
    let mut quads = chunk.chunks_exact(4);
    for quad in &mut quads {
        for k in 0..4 {
            acc[k] = f(acc[k], quad[k]);
        }
    }
    let rest = quads.remainder().iter().fold(init, |a, &v| f(a, v));
    f(f(acc[0], acc[1]), f(f(acc[2], acc[3]), rest))
}
