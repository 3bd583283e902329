//! Closing a minute over one block of a universe, in two passes: every instrument's series
//! and fold first, in bar order, each closed bucket owed to its resolution's batch (a gap
//! restarts a state and a repair rewarms it then), then the feature states resolution by
//! resolution, each batch taken kernel by kernel ([`Lanes::take`]).

use super::{is_gap, slot_of, Instrument, Updated};
use crate::bars::{Bar, Closed, PushOutcome, Resolution, MINUTE_NS};
use crate::features::engine::lanes::Lanes;
use crate::features::error::FeatureError;
use crate::features::primitives::input::BarInput;

/// Buffers a block's close reuses from minute to minute.
#[derive(Debug, Clone, Default)]
pub(super) struct Scratch {
    pub(super) closed: Vec<Closed>,
    /// Each resolution's bars to take, by lane (one buffer each: a split minute takes a
    /// block's resolutions on different threads).
    pub(super) batches: [Batch; Resolution::ALL.len()],
}

/// One resolution's bars to take, by lane.
pub(super) type Batch = Vec<(usize, BarInput)>;

/// Each resolution's batch (indexed like [`Resolution::ALL`]).
pub(super) type Batches<'b> = [&'b mut Batch];

/// What a close or an advance works on: a block's instruments (indexes from `base`), their
/// states (one [`Lanes`] per resolution) and its buffers.
pub(super) struct Run<'a, 'l> {
    pub(super) instruments: &'a mut [Instrument],
    pub(super) lanes: &'a mut [Lanes<'l>],
    pub(super) base: u32,
    pub(super) scratch: &'a mut Scratch,
}

impl Run<'_, '_> {
    /// Close `bars` (each instrument at most once) in two passes (see the module docs). One
    /// resolution's updates in a row take the same branches the same way (a ring still
    /// filling, a window wrapping) where one instrument's seven alternate between them, and
    /// each kernel's words are read as one stream (`docs/performance.md`).
    ///
    /// The first pass stops at the first refused bar; the updates owed by the bars before it
    /// are still taken. The first error is returned.
    pub(super) fn close(
        self,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let Scratch { closed, batches } = self.scratch;
        let mut batches = batches.each_mut();
        let instruments = (self.instruments, self.base);
        let folded = fold_bars(instruments, self.lanes, bars, closed, &mut batches, updated);
        take_all(self.lanes, &batches);
        folded
    }

    /// The watermark reached `watermark` (quiet minutes on INTERNAL): close the open buckets
    /// by then, in two passes as [`Self::close`].
    ///
    /// # Errors
    /// [`FeatureError::Bars`] on a volume overflow: the instruments after it are not
    /// advanced; the buckets the ones before it closed are taken.
    pub(super) fn advance(
        self,
        watermark: u64,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let Scratch { closed, batches } = self.scratch;
        let mut batches = batches.each_mut();
        batches.iter_mut().for_each(|batch| batch.clear());
        let (lanes, base) = (&mut *self.lanes, self.base);
        let mut owing = Ok(());
        let advanced = self
            .instruments
            .iter_mut()
            .enumerate()
            .try_for_each(|(lane, entry)| {
                closed.clear();
                entry.fold.advance(&entry.series, watermark, closed)?;
                let index = base + u32::try_from(lane).unwrap_or(u32::MAX);
                let owed =
                    entry.owe_swept(lanes, &mut batches, (index, lane), None, closed, updated);
                keep_first(&mut owing, owed);
                Ok(())
            });
        take_all(lanes, &batches);
        advanced.and(owing)
    }
}

/// The first pass of [`Run::close`] over `bars` of the instruments `instruments.0`
/// (indexes from `instruments.1`): the state updates they bring join `batches` (cleared
/// first), their rows go onto `updated`. Stops at the first refused bar and returns its
/// error; else the first error met owing an update ([`Instrument::owe`]).
pub(super) fn fold_bars(
    (instruments, base): (&mut [Instrument], u32),
    lanes: &mut [Lanes<'_>],
    bars: &[(u32, Bar)],
    closed: &mut Vec<Closed>,
    batches: &mut Batches<'_>,
    updated: &mut Vec<Updated>,
) -> Result<(), FeatureError> {
    batches.iter_mut().for_each(|batch| batch.clear());
    let mut owing = Ok(());
    let folded = bars.iter().try_for_each(|&(index, bar)| {
        let lane = (index - base) as usize;
        let entry = &mut instruments[lane];
        let Some(skipped) = entry.fold_minute((index, lane), lanes, bar, closed, updated)? else {
            return Ok(());
        };
        let owed = if skipped {
            entry.owe_swept(lanes, batches, (index, lane), Some(bar), closed, updated)
        } else {
            updated.push(Updated {
                instrument: index,
                resolution: Resolution::M1,
            });
            push_rows(index, closed, updated);
            let inputs = std::iter::once((Resolution::M1, Some(bar)));
            entry.owe(
                lanes,
                batches,
                lane,
                inputs.chain(closed.iter().map(input_of)),
            )
        };
        keep_first(&mut owing, owed);
        Ok(())
    });
    folded.and(owing)
}

/// Every resolution takes its batch, kernel by kernel ([`Lanes::take`]).
pub(super) fn take_all(lanes: &mut [Lanes<'_>], batches: &Batches<'_>) {
    for (lanes, batch) in lanes.iter_mut().zip(batches) {
        lanes.take(batch);
    }
}

/// `result` kept in `first` unless an earlier error is there.
pub(super) fn keep_first(first: &mut Result<(), FeatureError>, result: Result<(), FeatureError>) {
    if first.is_ok() {
        *first = result;
    }
}

/// `bars` cut, in order, into the longest runs in which no instrument comes twice (indexes
/// below `instruments`).
pub(super) fn distinct_runs(
    bars: &[(u32, Bar)],
    instruments: usize,
) -> impl Iterator<Item = &[(u32, Bar)]> {
    let mut seen = vec![false; instruments];
    let mut rest = bars;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let len = rest
            .iter()
            .position(|&(index, _)| std::mem::replace(&mut seen[index as usize], true))
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(len);
        run.iter()
            .for_each(|&(index, _)| seen[index as usize] = false);
        rest = tail;
        Some(run)
    })
}

impl Instrument {
    /// Take one minute's bar into the series and the fold (the buckets it closed in
    /// `closed`). Returns `None` when the states owe nothing: a late bar rewarms what it
    /// touched at once (its rows go onto `updated`), and a duplicate changes nothing. Else
    /// the states owe the updates (their rows are the caller's to push), and `Some(true)`
    /// says the bar came after a minute the fold had not reached: it may have closed
    /// buckets with nothing in them.
    fn fold_minute(
        &mut self,
        (index, lane): (u32, usize),
        lanes: &mut [Lanes<'_>],
        bar: Bar,
        closed: &mut Vec<Closed>,
        updated: &mut Vec<Updated>,
    ) -> Result<Option<bool>, FeatureError> {
        closed.clear();
        let closed_before = self.fold.closed_through();
        let outcome = self.series.push(bar);
        self.fold.on_push(&self.series, &bar, &outcome, closed)?;
        let late = match outcome {
            PushOutcome::Inserted(_) => true,
            PushOutcome::Appended(_) => bar.ts_event <= closed_before,
            _ => return Ok(None),
        };
        if late {
            // A late bar changes closed history: rewarm what it touched.
            self.rewarm_touched((index, lane), lanes, closed, updated)?;
            return Ok(None);
        }
        // The fold's watermark is at least the newest bar before this one.
        Ok(Some(bar.ts_event - closed_before > MINUTE_NS))
    }

    /// Lane `lane` owes its states `inputs` (a resolution and its bar; `None`: a withheld
    /// bucket): first what each needs alone (a gap restarts it, a repair rewarms it from the
    /// series), then the bar joins its resolution's batch. The first error is returned
    /// after the rest.
    pub(super) fn owe(
        &self,
        lanes: &mut [Lanes<'_>],
        batches: &mut Batches<'_>,
        lane: usize,
        inputs: impl Iterator<Item = (Resolution, Option<Bar>)>,
    ) -> Result<(), FeatureError> {
        let mut first = Ok(());
        for (resolution, input) in inputs {
            let (lanes, batch) = (
                &mut lanes[slot_of(resolution)],
                &mut *batches[slot_of(resolution)],
            );
            let last = lanes.last_ts_event(lane);
            let Some(bar) = input else {
                // Before its first bar a state is warming up, not interrupted.
                if last.is_some() {
                    lanes.mark_gap(lane);
                }
                continue;
            };
            match last {
                Some(last) if bar.ts_event <= last => {
                    keep_first(&mut first, self.rewarm_lane(lanes, lane, resolution));
                    continue;
                }
                Some(last) if self.is_gap(resolution, last, bar.ts_event) => {
                    lanes.mark_gap(lane);
                }
                _ => {}
            }
            // The series refused inconsistent bars, a derived bar aggregates consistent
            // ones, and the order was checked above: nothing is left to validate.
            batch.push((lane, lanes.convert(lane, &bar)));
        }
        first
    }

    /// Whether this instrument's consecutive inputs at `resolution`, closing at `prev` and
    /// `next`, straddle a gap.
    pub(super) fn is_gap(&self, resolution: Resolution, prev: u64, next: u64) -> bool {
        is_gap(
            self.series.coverage(),
            self.channel(),
            resolution,
            prev,
            next,
        )
    }
}

/// The rows of the buckets in `closed` onto `updated`.
pub(super) fn push_rows(index: u32, closed: &[Closed], updated: &mut Vec<Updated>) {
    updated.extend(closed.iter().map(|event| Updated {
        instrument: index,
        resolution: input_of(event).0,
    }));
}

/// A fold event as a state's input: the bar of a closed bucket, `None` for a withheld one.
pub(super) fn input_of(event: &Closed) -> (Resolution, Option<Bar>) {
    match *event {
        Closed::Bar {
            resolution, bar, ..
        } => (resolution, Some(bar)),
        Closed::Withheld { resolution, .. } => (resolution, None),
    }
}
