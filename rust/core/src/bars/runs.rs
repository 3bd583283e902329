//! The fold's fast path: a run of consecutive buckets that are closed, inside one observed
//! span and complete (every input of the finer grid present). Such buckets are all served and
//! none withheld, whatever the channel, so they need none of the per-bucket rule checks: the
//! run is found with a few probes and aggregated column by column over fixed-size chunks.
//! Anything else (a gap, an outage, the open bucket) goes through the per-bucket walk in
//! fold.rs, so the result is the same bar for bar.

use super::fold::{sum_volume, Derived};
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
/// lanes) that runs ~3x slower than these four scalar chains; for the short constant chunks
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

#[cfg(test)]
mod tests {
    use super::super::fold::{extent, fold_from};
    use super::super::{
        fold, fold_many, BarsView, Channel, Coverage, FoldOutput, Resolution, MINUTE_NS,
    };
    use super::BarsError;
    use proptest::prelude::*;

    /// Offline columns and the coverage stated with them.
    struct Case {
        columns: [Vec<i64>; 5],
        ts: Vec<u64>,
        sequence: Option<Vec<u64>>,
        coverage: Coverage,
    }

    impl Case {
        fn view(&self) -> BarsView<'_> {
            let [open, high, low, close, volume] = &self.columns;
            BarsView {
                ts_event: &self.ts,
                open,
                high,
                low,
                close,
                volume,
                sequence: self.sequence.as_deref(),
            }
        }
    }

    /// Minutes over a few days with dropped ones, volumes sometimes near 2^63 (so some sums
    /// overflow and some only come close), and coverage with outages that may end before
    /// the bars do (open buckets) or reach past them.
    /// With `confirm`, about half the dropped minutes are confirmed empty by the venue.
    fn case(
        seed: u64,
        minutes: u64,
        drop: u64,
        huge: bool,
        holes: usize,
        sequenced: bool,
        confirm: bool,
    ) -> Case {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let first = 19_000 * 1_440 + next() % 2_880;
        let mut case = Case {
            columns: Default::default(),
            ts: Vec::new(),
            sequence: sequenced.then(Vec::new),
            coverage: Coverage::new(),
        };
        let mut price = 10_000i64;
        for minute in first..first + minutes {
            if next() % 1_000 < drop {
                if confirm && next() % 2 == 0 {
                    let _ = case
                        .coverage
                        .confirm_empty(minute * MINUTE_NS, (minute + 1) * MINUTE_NS);
                }
                continue;
            }
            price += (next() % 41) as i64 - 20;
            let spread = (next() % 4) as i64;
            let volume = match next() % 8 {
                0 if huge => 1 << 62,
                1 if huge => i64::MAX / 3,
                _ => (next() % 1_000) as i64,
            };
            for (column, value) in case.columns.iter_mut().zip([
                price,
                price + spread,
                price - spread,
                price + spread / 2,
                volume,
            ]) {
                column.push(value);
            }
            case.ts.push((minute + 1) * MINUTE_NS);
            if let Some(sequence) = &mut case.sequence {
                sequence.push(next() % 1_000_000);
            }
        }
        let (lo, hi) = (first - next() % 300, first + minutes + next() % 300);
        let mut cuts: Vec<u64> = (0..2 * holes).map(|_| lo + next() % (hi - lo)).collect();
        cuts.sort_unstable();
        let edges: Vec<u64> = [lo].into_iter().chain(cuts).chain([hi]).collect();
        for pair in edges.chunks_exact(2) {
            if pair[0] < pair[1] {
                let _ = case
                    .coverage
                    .observe(pair[0] * MINUTE_NS, pair[1] * MINUTE_NS);
            }
        }
        case
    }

    /// The fold without the fast path: the per-bucket walk alone.
    fn walked(
        case: &Case,
        channel: Channel,
        resolution: Resolution,
    ) -> Result<FoldOutput, BarsError> {
        let view = case.view();
        let span = extent(&view, MINUTE_NS, &case.coverage);
        fold_from(
            &view,
            Resolution::M1,
            span,
            &case.coverage,
            channel,
            resolution,
            view.ts_event,
            false,
        )
    }

    proptest! {
        #[test]
        fn runs_change_nothing(
            seed in any::<u64>(),
            minutes in 0u64..4_000,
            drop in prop::sample::select(vec![0u64, 1, 2, 50, 500]),
            huge in any::<bool>(),
            holes in 0usize..3,
            sequenced in any::<bool>(),
            external in any::<bool>(),
            confirm in any::<bool>(),
        ) {
            let case = case(seed, minutes, drop, huge, holes, sequenced, confirm);
            let channel = if external { Channel::External } else { Channel::Internal };
            let view = case.view();
            prop_assert!(view.validate().is_ok());
            let mut expected = Vec::new();
            for resolution in Resolution::ALL {
                let walked = walked(&case, channel, resolution);
                prop_assert_eq!(&fold(&view, &case.coverage, channel, resolution), &walked);
                expected.push(walked);
            }
            // fold_many: every derived resolution, out of order and one twice; the first
            // refusal in ascending order when any level refuses.
            let asked = [Resolution::H1, Resolution::M5, Resolution::D1, Resolution::M15,
                Resolution::H1, Resolution::H4, Resolution::M30];
            let want: Result<Vec<FoldOutput>, BarsError> = asked
                .iter()
                .map(|&r| expected[Resolution::ALL.iter().position(|&a| a == r).unwrap_or(0)].clone())
                .collect();
            let want = match expected[1..].iter().find_map(|e| e.clone().err()) {
                Some(error) => Err(error),
                None => want,
            };
            prop_assert_eq!(fold_many(&view, &case.coverage, channel, &asked), want);
        }
    }
}
