//! Closing a minute over one block of a universe, in two passes: every instrument's series
//! and fold first, in bar order, then the feature states resolution by resolution, each
//! resolution's bars in one batch taken kernel by kernel ([`Lanes::take`]).

use super::super::error::FeatureError;
use super::super::lanes::Lanes;
use super::super::BarInput;
use super::{is_gap, slot_of, Instrument, Updated};
use crate::bars::{Bar, Closed, PushOutcome, Resolution};

/// Buffers a block's close reuses from minute to minute.
#[derive(Debug, Clone, Default)]
pub(super) struct Scratch {
    pub(super) closed: Vec<Closed>,
    /// The state updates a run owes, by resolution (see [`Run::close`]).
    pub(super) owed: OwedLists,
    /// Each resolution's bars to take, by lane (one buffer each: a split minute takes a
    /// block's resolutions on different threads).
    pub(super) batches: [Batch; Resolution::ALL.len()],
}

/// One resolution's bars to take, by lane.
pub(super) type Batch = Vec<(usize, BarInput)>;

/// The state updates a first pass owes, by resolution.
#[derive(Debug, Clone, Default)]
pub(super) struct OwedLists([Vec<Owed>; Resolution::ALL.len()]);

impl OwedLists {
    /// Lane `lane`'s state at `resolution` takes `input` (`None`: its bucket was withheld).
    fn push(&mut self, lane: usize, resolution: Resolution, input: Option<Bar>) {
        self.0[slot_of(resolution)].push(Owed { lane, input });
    }

    /// What is owed at the resolution of slot `slot`.
    pub(super) fn at(&self, slot: usize) -> &[Owed] {
        &self.0[slot]
    }

    fn clear(&mut self) {
        self.0.iter_mut().for_each(Vec::clear);
    }
}

/// A state update the first pass of [`Run::close`] owes: the instrument's lane, and the bar
/// its state takes (`None`: the bucket was withheld).
#[derive(Debug, Clone, Copy)]
pub(super) struct Owed {
    lane: usize,
    input: Option<Bar>,
}

/// What a close or an advance works on: a block's instruments (indexes from `base`), their
/// states (one [`Lanes`] per resolution) and its buffers.
pub(super) struct Run<'a, 'l> {
    pub(super) instruments: &'a mut [Instrument],
    pub(super) lanes: &'a mut [Lanes<'l>],
    pub(super) base: u32,
    pub(super) scratch: &'a mut Scratch,
}

impl<'l> Run<'_, 'l> {
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
        let base = self.base;
        self.two_passes(|instruments, lanes, closed, owed| {
            fold_bars((instruments, base), lanes, bars, closed, owed, updated)
        })
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
        let base = self.base;
        self.two_passes(|instruments, _, closed, owed| {
            instruments
                .iter_mut()
                .enumerate()
                .try_for_each(|(lane, entry)| {
                    closed.clear();
                    entry.fold.advance(&entry.series, watermark, closed)?;
                    let index = base + u32::try_from(lane).unwrap_or(u32::MAX);
                    owe_closed(index, closed, updated, |resolution, input| {
                        owed.push(lane, resolution, input);
                    });
                    Ok(())
                })
        })
    }

    /// The first pass (`fold`: series and folds, owing state updates), then the states take
    /// what it owes, whatever it returned; its error, else the states' first, is returned.
    fn two_passes(
        self,
        fold: impl FnOnce(
            &mut [Instrument],
            &mut [Lanes<'l>],
            &mut Vec<Closed>,
            &mut OwedLists,
        ) -> Result<(), FeatureError>,
    ) -> Result<(), FeatureError> {
        let Scratch {
            closed,
            owed,
            batches,
        } = self.scratch;
        owed.clear();
        let folded = fold(self.instruments, self.lanes, closed, owed);
        folded.and(take_all_owed(self.instruments, self.lanes, owed, batches))
    }
}

/// The first pass of [`Run::close`] over `bars` of the instruments `instruments.0`
/// (indexes from `instruments.1`): the updates they bring go to `owed` (cleared), their rows
/// onto `updated`. Stops at the first refused bar and returns its error.
pub(super) fn fold_bars(
    (instruments, base): (&mut [Instrument], u32),
    lanes: &mut [Lanes<'_>],
    bars: &[(u32, Bar)],
    closed: &mut Vec<Closed>,
    owed: &mut OwedLists,
    updated: &mut Vec<Updated>,
) -> Result<(), FeatureError> {
    owed.clear();
    bars.iter().try_for_each(|&(index, bar)| {
        let lane = (index - base) as usize;
        instruments[lane].fold_minute(
            (index, lane),
            lanes,
            bar,
            closed,
            updated,
            |resolution, input| owed.push(lane, resolution, input),
        )
    })
}

/// Every resolution takes its owed updates, whatever an earlier one returned; the first
/// error is returned.
fn take_all_owed(
    instruments: &[Instrument],
    lanes: &mut [Lanes<'_>],
    owed: &OwedLists,
    batches: &mut [Batch; Resolution::ALL.len()],
) -> Result<(), FeatureError> {
    let mut taken = Ok(());
    let each = Resolution::ALL
        .iter()
        .zip(&owed.0)
        .zip(lanes.iter_mut().zip(batches));
    for ((&resolution, owed), (lanes, batch)) in each {
        let result = take_owed(instruments, lanes, resolution, owed, batch);
        if taken.is_ok() {
            taken = result;
        }
    }
    taken
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

/// Take one resolution's owed updates (each instrument at most once): first what each
/// needs alone (a gap restarts it, a repair rewarms it from the series), then every bar
/// in one batch, kernel by kernel ([`Lanes::take`]). The first error is returned after the
/// rest.
pub(super) fn take_owed(
    instruments: &[Instrument],
    lanes: &mut Lanes<'_>,
    resolution: Resolution,
    owed: &[Owed],
    batch: &mut Batch,
) -> Result<(), FeatureError> {
    batch.clear();
    let mut first = Ok(());
    for &Owed { lane, input } in owed {
        let entry = &instruments[lane];
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
                let rewarmed = entry.rewarm_lane(lanes, lane, resolution);
                if first.is_ok() {
                    first = rewarmed;
                }
                continue;
            }
            Some(last) if entry.is_gap(resolution, last, bar.ts_event) => {
                lanes.mark_gap(lane);
            }
            _ => {}
        }
        // The series refused inconsistent bars, a derived bar aggregates consistent ones,
        // and the order was checked above: nothing is left to validate.
        batch.push((lane, lanes.convert(lane, &bar)));
    }
    lanes.take(batch);
    first
}

impl Instrument {
    /// Take one minute's bar into the series and the fold. The state updates it brings (the
    /// 1m bar, the buckets it closes) go to `owe`, and their rows onto `updated`; a late bar
    /// rewarms what it touched at once.
    fn fold_minute(
        &mut self,
        (index, lane): (u32, usize),
        lanes: &mut [Lanes<'_>],
        bar: Bar,
        closed: &mut Vec<Closed>,
        updated: &mut Vec<Updated>,
        mut owe: impl FnMut(Resolution, Option<Bar>),
    ) -> Result<(), FeatureError> {
        closed.clear();
        let closed_before = self.fold.closed_through();
        let outcome = self.series.push(bar);
        self.fold.on_push(&self.series, &bar, &outcome, closed)?;
        let late = match outcome {
            PushOutcome::Inserted(_) => true,
            PushOutcome::Appended(_) => bar.ts_event <= closed_before,
            _ => return Ok(()),
        };
        if late {
            // A late bar changes closed history: rewarm what it touched.
            return self.rewarm_touched((index, lane), lanes, closed, updated);
        }
        owe(Resolution::M1, Some(bar));
        updated.push(Updated {
            instrument: index,
            resolution: Resolution::M1,
        });
        owe_closed(index, closed, updated, owe);
        Ok(())
    }

    /// Whether this instrument's consecutive inputs at `resolution`, closing at `prev` and
    /// `next`, straddle a gap.
    fn is_gap(&self, resolution: Resolution, prev: u64, next: u64) -> bool {
        is_gap(
            self.series.coverage(),
            self.channel(),
            resolution,
            prev,
            next,
        )
    }
}

/// The state updates `closed` brings an instrument go to `owe`, their rows onto `updated`.
fn owe_closed(
    index: u32,
    closed: &[Closed],
    updated: &mut Vec<Updated>,
    mut owe: impl FnMut(Resolution, Option<Bar>),
) {
    for event in closed {
        let (resolution, input) = input_of(event);
        owe(resolution, input);
        updated.push(Updated {
            instrument: index,
            resolution,
        });
    }
}

/// A fold event as a state's input: the bar of a closed bucket, `None` for a withheld one.
fn input_of(event: &Closed) -> (Resolution, Option<Bar>) {
    match *event {
        Closed::Bar {
            resolution, bar, ..
        } => (resolution, Some(bar)),
        Closed::Withheld { resolution, .. } => (resolution, None),
    }
}
