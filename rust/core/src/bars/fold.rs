//! Folding a 1-minute series into a derived resolution: open = first, high = max,
//! low = min, close = last, volume = sum, exact in fixed point.
//!
//! A bucket is served only when it is closed (the observed watermark has reached its end),
//! fully observed, and — on EXTERNAL — complete: each minute holds a candle or was confirmed
//! empty by the venue (see [`Coverage`]), which then counts as a no-trade minute does on
//! INTERNAL. Otherwise it is withheld with its reason; consecutive withheld buckets with one
//! reason are reported as one span.

use super::derived::{sum_volume, Derived};
use super::runs::{complete_run, emit_run};
use super::{Bar, BarsError, BarsView, Channel, Coverage, Resolution, MINUTE_NS};

/// Why a bucket was not computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WithheldReason {
    /// EXTERNAL: a minute inside observed coverage has no candle.
    GapInInput,
    /// Part of the bucket was never observed (down, disconnected, not yet backfilled, evicted).
    Unobserved,
    /// The watermark has not reached the bucket's end.
    NotClosed,
}

impl WithheldReason {
    /// The wire name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::GapInInput => "GAP_IN_INPUT",
            Self::Unobserved => "UNOBSERVED",
            Self::NotClosed => "NOT_CLOSED",
        }
    }
}

/// A withheld span of buckets `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Withheld {
    /// Start of the first withheld bucket.
    pub start: u64,
    /// End of the last withheld bucket.
    pub end: u64,
    /// Why.
    pub reason: WithheldReason,
}

/// The result of one fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldOutput {
    /// The resolution folded to.
    pub resolution: Resolution,
    /// Closed, complete buckets.
    pub bars: Derived,
    /// Buckets not computed, as spans, oldest first.
    pub withheld: Vec<Withheld>,
}

/// Fold a validated view (see [`BarsView::validate`]) to `resolution`.
///
/// The buckets considered run from the one holding the first observation (or first bar) to
/// the one holding the last; entirely unobserved buckets between observations are withheld
/// as `UNOBSERVED`.
///
/// # Errors
/// [`BarsError::VolumeOverflow`] when a bucket's volume does not fit a 64-bit mantissa.
pub fn fold(
    view: &BarsView<'_>,
    coverage: &Coverage,
    channel: Channel,
    resolution: Resolution,
) -> Result<FoldOutput, BarsError> {
    let mut one = fold_many(view, coverage, channel, &[resolution])?;
    // `fold_many` answers each resolution asked for: exactly one here, so this cannot panic.
    Ok(one.swap_remove(0))
}

/// Fold to several resolutions at once. Each is folded from the largest requested resolution
/// below it (1h from 30m, 1d from 4h, ...) rather than from the minutes again: the calendar
/// grid nests, and so do the rules (a coarse bucket is covered and closed exactly when all its
/// sub-buckets are, and complete when each sub-bucket is a bar; one that is not is checked
/// against the minutes, since a sub-bucket of minutes confirmed empty has no bar and no gap),
/// so the result equals folding each from the minutes, for a fraction of the work.
///
/// # Errors
/// [`BarsError::VolumeOverflow`].
pub fn fold_many(
    view: &BarsView<'_>,
    coverage: &Coverage,
    channel: Channel,
    resolutions: &[Resolution],
) -> Result<Vec<FoldOutput>, BarsError> {
    let mut wanted = resolutions.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    // The span considered is that of the minutes, whichever level a fold starts from.
    let span = extent(view, Resolution::M1.step_ns(), coverage);
    let mut outputs: Vec<FoldOutput> = Vec::with_capacity(wanted.len());
    for &resolution in &wanted {
        let (finer, input) = match outputs.last() {
            Some(previous) if previous.resolution.minutes() > 1 => (
                previous.bars.view(view.sequence.is_some()),
                previous.resolution,
            ),
            _ => (*view, Resolution::M1),
        };
        let output = fold_from(
            &finer,
            input,
            span,
            coverage,
            channel,
            resolution,
            view.ts_event,
            true,
        )?;
        outputs.push(output);
    }
    // Hand the outputs over in the order asked; only a resolution asked twice is copied.
    let mut folded: Vec<Option<FoldOutput>> = outputs.into_iter().map(Some).collect();
    let mut ordered: Vec<FoldOutput> = Vec::with_capacity(resolutions.len());
    for resolution in resolutions {
        let Ok(k) = wanted.binary_search(resolution) else {
            continue;
        };
        match folded[k].take() {
            Some(output) => ordered.push(output),
            None => {
                if let Some(copy) = ordered.iter().find(|o| o.resolution == *resolution) {
                    ordered.push(copy.clone());
                }
            }
        }
    }
    Ok(ordered)
}

/// Fold bars of resolution `input` (its buckets nest in `resolution`'s) to `resolution`;
/// `minutes` are the 1-minute closes they came from (an incomplete bucket is checked against
/// them). `runs` takes the fast path over runs of complete buckets (off only in tests, which
/// check that it changes nothing).
#[allow(clippy::too_many_arguments)] // one private walk; a struct would only rename them
pub(super) fn fold_from(
    view: &BarsView<'_>,
    input: Resolution,
    span: Option<(u64, u64)>,
    coverage: &Coverage,
    channel: Channel,
    resolution: Resolution,
    minutes_ts: &[u64],
    runs: bool,
) -> Result<FoldOutput, BarsError> {
    let per_bucket = (resolution.minutes() / input.minutes()).max(1) as usize;
    let mut out = FoldOutput {
        resolution,
        bars: Derived::with_capacity(view.len() / per_bucket + 1, view.sequence.is_some()),
        withheld: Vec::new(),
    };
    let Some((lo, hi)) = span else { return Ok(out) };
    let step = resolution.step_ns();
    let minutes = per_bucket;
    let watermark = coverage.watermark().unwrap_or(0);
    let (ts, n) = (view.ts_event, view.len());
    let mut end = lo / step * step + step;
    let mut i = 0;
    while end - step < hi {
        let start = end - step;
        // Complete, covered buckets are all served, so a run of them skips the checks below
        // and is aggregated in one go (runs.rs); the walk resumes at the first other bucket.
        let run = if runs {
            complete_run(ts, i, minutes, start, step, coverage)
        } else {
            0
        };
        if run > 0 {
            emit_run(&mut out.bars, view, i, minutes, run, end, step)?;
            i += run * minutes;
            end += run as u64 * step;
            continue;
        }
        // Inputs of this bucket close in (start, end]; there are at most `minutes` of them.
        let window = &ts[i..n.min(i + minutes)];
        let j = i + window.partition_point(|&t| t <= end);
        let reason = if end > watermark {
            Some(WithheldReason::NotClosed)
        } else {
            closed_reason(coverage, channel, minutes_ts, start, end, j - i < minutes)
        };
        match reason {
            Some(reason) => withhold(&mut out.withheld, start, end, reason),
            None if j > i => emit(&mut out.bars, view, i, j, end)?,
            None => {} // INTERNAL: only no-trade minutes, so no bar.
        }
        let empty_and_unobserved = j == i && !coverage.intersects(start, end);
        i = j;
        end = if empty_and_unobserved {
            // Never skip past the watermark: NOT_CLOSED takes precedence over UNOBSERVED.
            let limit = hi.min(watermark / step * step);
            let next_open = ts.get(i).map(|t| t - input.step_ns());
            skip_unobserved(&mut out.withheld, next_open, coverage, end, limit, step)
        } else {
            end + step
        };
    }
    Ok(out)
}

/// The instants spanned by bars (of width `input_step`) and coverage together, `[lo, hi)`.
pub(super) fn extent(
    view: &BarsView<'_>,
    input_step: u64,
    coverage: &Coverage,
) -> Option<(u64, u64)> {
    let first_bar = view.ts_event.first().map(|&t| t - input_step);
    let last_bar = view.ts_event.last().copied();
    let lo = [first_bar, coverage.first_start()]
        .into_iter()
        .flatten()
        .min()?;
    let hi = [last_bar, coverage.watermark()]
        .into_iter()
        .flatten()
        .max()?;
    Some((lo, hi))
}

/// After an empty, unobserved bucket ending at `from`: jump over the following buckets that
/// hold no bar and no observation, withholding them as one span, but never past `limit`
/// (buckets ending after the watermark are NOT_CLOSED, which takes precedence, and are
/// visited one by one). Returns the end of the next bucket worth visiting.
fn skip_unobserved(
    withheld: &mut Vec<Withheld>,
    next_bar_open: Option<u64>,
    coverage: &Coverage,
    from: u64,
    limit: u64,
    step: u64,
) -> u64 {
    let next = [next_bar_open, coverage.next_observed(from)]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(limit)
        .min(limit);
    let resume_start = next / step * step;
    if resume_start > from {
        withhold(withheld, from, resume_start, WithheldReason::Unobserved);
    }
    resume_start.max(from) + step
}

fn withhold(withheld: &mut Vec<Withheld>, start: u64, end: u64, reason: WithheldReason) {
    match withheld.last_mut() {
        Some(last) if last.reason == reason && last.end == start => last.end = end,
        _ => withheld.push(Withheld { start, end, reason }),
    }
}

/// Why a closed bucket `[start, end)` is withheld, if it is: `UNOBSERVED` unless one observed
/// span covers it, then (EXTERNAL only) `GAP_IN_INPUT` when it is `incomplete` and a minute
/// has no candle among `minutes` (the 1-minute closes) and was not confirmed empty.
pub(super) fn closed_reason(
    coverage: &Coverage,
    channel: Channel,
    minutes: &[u64],
    start: u64,
    end: u64,
    incomplete: bool,
) -> Option<WithheldReason> {
    if !coverage.covers(start, end) {
        Some(WithheldReason::Unobserved)
    } else if channel == Channel::External
        && incomplete
        && unconfirmed_hole(minutes, coverage, start, end)
    {
        Some(WithheldReason::GapInInput)
    } else {
        None
    }
}

/// Whether a minute of `[start, end)` holds no close among `minutes` (sorted) and is not
/// confirmed empty. Walks the bucket's bars: only for incomplete buckets of a series with
/// confirmed minutes, so the common gap answers at once.
fn unconfirmed_hole(minutes: &[u64], coverage: &Coverage, start: u64, end: u64) -> bool {
    if coverage.confirmed().is_empty() {
        return true;
    }
    let mut i = minutes.partition_point(|&t| t <= start);
    let mut open = start;
    while let Some(&close) = minutes.get(i).filter(|&&t| t <= end) {
        let bar_open = close - MINUTE_NS;
        if bar_open > open && !coverage.confirmed_covers(open, bar_open) {
            return true;
        }
        open = close;
        i += 1;
    }
    open < end && !coverage.confirmed_covers(open, end)
}

/// The derived bar closing at `end` from the inputs `i..j` (non-empty), and the highest
/// constituent sequence (0 when the input has none).
///
/// # Errors
/// [`BarsError::VolumeOverflow`].
pub(super) fn aggregate(
    view: &BarsView<'_>,
    i: usize,
    j: usize,
    end: u64,
) -> Result<(Bar, u64), BarsError> {
    let bar = Bar {
        ts_event: end,
        open: view.open[i],
        high: view.high[i..j]
            .iter()
            .copied()
            .max()
            .unwrap_or(view.high[i]),
        low: view.low[i..j].iter().copied().min().unwrap_or(view.low[i]),
        close: view.close[j - 1],
        volume: sum_volume(&view.volume[i..j])
            .ok_or(BarsError::VolumeOverflow { ts_event: end })?,
    };
    let sequence = view
        .sequence
        .map_or(0, |s| s[i..j].iter().copied().max().unwrap_or(0));
    Ok((bar, sequence))
}

fn emit(
    bars: &mut Derived,
    view: &BarsView<'_>,
    i: usize,
    j: usize,
    end: u64,
) -> Result<(), BarsError> {
    let (bar, sequence) = aggregate(view, i, j, end)?;
    bars.ts_event.push(end);
    bars.open.push(bar.open);
    bars.high.push(bar.high);
    bars.low.push(bar.low);
    bars.close.push(bar.close);
    bars.volume.push(bar.volume);
    if view.sequence.is_some() {
        bars.sequence.push(sequence);
    }
    Ok(())
}

#[cfg(test)]
mod property_tests;
