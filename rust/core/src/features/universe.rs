//! The feature fold over a universe of instruments: per instrument, the durable 1-minute
//! series, its incremental fold to the six derived resolutions, and one [`FeatureState`] per
//! resolution (1m native, 5m..1d from derived closed bars). One call closes a minute across
//! the whole universe; rows change only where a bar (or a withheld bucket) closed.
//!
//! Gaps restart a state ([`FeatureState::mark_gap`]): a withheld bucket, or two consecutive
//! inputs further apart than one step where the skipped buckets were not quiet (EXTERNAL: any
//! skipped bucket is a gap; INTERNAL: a skipped bucket is a gap unless it was observed). A
//! repaired bar (a late bar into a closed bucket) rewarms that resolution from the series.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use rayon::prelude::*;

use super::error::FeatureError;
use super::lanes::{Lanes, Store};
use super::layout::Layout;
use super::registry::Compiled;
use super::state::FeatureState;
use super::BarInput;
use crate::bars::{
    Bar, BarsView, Channel, Closed, Coverage, IncrementalFold, PushOutcome, Resolution, Series,
    SeriesConfig,
};

/// One (instrument, resolution) row that changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Updated {
    /// The instrument's index in the universe.
    pub instrument: u32,
    /// The resolution whose row changed.
    pub resolution: Resolution,
}

#[derive(Debug, Clone)]
struct Instrument {
    series: Series,
    fold: IncrementalFold,
}

/// The universe (see the module docs).
#[derive(Debug, Clone)]
pub struct Universe {
    /// Shared by every state: the templates a bar's update reads stay hot.
    layout: Arc<Layout>,
    instruments: Vec<Instrument>,
    /// The feature states, one store per resolution (indexed like [`Resolution::ALL`]), an
    /// instrument's state at its index in each (see [`super::lanes`]).
    stores: Vec<Store>,
    scratch: Scratch,
}

/// Buffers a minute's close reuses (one set per thread).
#[derive(Debug, Clone, Default)]
struct Scratch {
    closed: Vec<Closed>,
    /// The state updates a run owes, by resolution (see [`close_run`]).
    owed: [Vec<Owed>; Resolution::ALL.len()],
    /// One resolution's bars to take, by lane.
    batch: Vec<(usize, BarInput)>,
}

/// A state update the first pass of [`close_run`] owes: the instrument's place in its run,
/// and the bar its state takes (`None`: the bucket was withheld).
#[derive(Debug, Clone, Copy)]
struct Owed {
    instrument: usize,
    input: Option<Bar>,
}

/// A minute with at least this many bars splits over the pool's threads. Handing chunks to
/// the pool costs a few microseconds: a day minute of 256 bars measured 42 µs split against
/// 60 µs on one thread, and 128 bars came out even.
const PARALLEL_MIN: usize = 256;

/// At most this many threads close one minute.
const MAX_PARTS: usize = 8;

/// Chunks per thread a split minute is cut into: more than one, so that a thread the
/// machine slows down leaves part of its share to the others; few, because each chunk closes
/// in two passes (see [`close_run`]) and a longer run keeps one resolution's updates in a row
/// longer (1,000 instruments at midnight: 2 per thread measured 1.10-1.28 ms, 8 per thread
/// 1.16-1.68 ms).
const CHUNKS_PER_THREAD: usize = 2;

/// Threads this process may run at once.
static THREADS: LazyLock<usize> =
    LazyLock::new(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));

/// The pool that closes split minutes, and the process that built it.
static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// This process's pool (its threads stay up between minutes), built on first use, and built
/// again in a child forked after it: a fork copies the pool but not its threads, and the
/// child would wait forever on work no thread takes. `None` when no thread can be started.
fn pool() -> Option<Arc<rayon::ThreadPool>> {
    let pid = std::process::id();
    let mut held = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, pool)) = held.as_ref() {
        if *owner == pid {
            return Some(Arc::clone(pool));
        }
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(*THREADS)
            .thread_name(|i| format!("spine-close-{i}"))
            .build()
            .ok()?,
    );
    // A parent's pool in a forked child has no threads to stop: leave it, never drop it.
    if let Some(parents) = held.replace((pid, Arc::clone(&pool))) {
        std::mem::forget(parents);
    }
    Some(pool)
}

/// Close `bars` (instrument indexes from `base`, each instrument at most once) over
/// `instruments` (and their states, `lanes`, one per resolution) in two passes: every
/// instrument's series and fold first, in bar order, then the feature states resolution by
/// resolution, each resolution's bars in one batch taken kernel by kernel
/// ([`Lanes::take`]). One resolution's updates in a row take the same branches the same way
/// (a ring still filling, a window wrapping) where one instrument's seven alternate between
/// them, and each kernel's words are read as one stream (`docs/performance.md`).
///
/// The first pass stops at the first refused bar; the updates owed by the bars before it
/// are still taken. The first error is returned.
fn close_run(
    instruments: &mut [Instrument],
    lanes: &mut [Lanes<'_>],
    base: u32,
    bars: &[(u32, Bar)],
    scratch: &mut Scratch,
    updated: &mut Vec<Updated>,
) -> Result<(), FeatureError> {
    let Scratch {
        closed,
        owed,
        batch,
    } = scratch;
    owed.iter_mut().for_each(Vec::clear);
    let folded = bars.iter().try_for_each(|&(index, bar)| {
        let instrument = (index - base) as usize;
        instruments[instrument].fold_minute(
            (index, instrument),
            lanes,
            bar,
            closed,
            updated,
            |resolution, input| {
                owed[slot_of(resolution)].push(Owed { instrument, input });
            },
        )
    });
    folded.and(take_all_owed(instruments, lanes, owed, batch))
}

/// Every resolution takes its owed updates, whatever an earlier one returned; the first
/// error is returned.
fn take_all_owed(
    instruments: &[Instrument],
    lanes: &mut [Lanes<'_>],
    owed: &[Vec<Owed>; Resolution::ALL.len()],
    batch: &mut Vec<(usize, BarInput)>,
) -> Result<(), FeatureError> {
    let mut taken = Ok(());
    for ((&resolution, owed), lanes) in Resolution::ALL.iter().zip(owed).zip(lanes) {
        let result = take_owed(instruments, lanes, resolution, owed, batch);
        if taken.is_ok() {
            taken = result;
        }
    }
    taken
}

/// `bars` cut, in order, into the longest runs in which no instrument comes twice (indexes
/// below `instruments`).
fn distinct_runs(bars: &[(u32, Bar)], instruments: usize) -> impl Iterator<Item = &[(u32, Bar)]> {
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
fn take_owed(
    instruments: &[Instrument],
    lanes: &mut Lanes<'_>,
    resolution: Resolution,
    owed: &[Owed],
    batch: &mut Vec<(usize, BarInput)>,
) -> Result<(), FeatureError> {
    batch.clear();
    let mut first = Ok(());
    for &Owed { instrument, input } in owed {
        let entry = &instruments[instrument];
        let last = lanes.last_ts_event(instrument);
        let Some(bar) = input else {
            // Before its first bar a state is warming up, not interrupted.
            if last.is_some() {
                lanes.mark_gap(instrument);
            }
            continue;
        };
        match last {
            Some(last) if bar.ts_event <= last => {
                let rewarmed = entry.rewarm_lane(lanes, instrument, resolution);
                if first.is_ok() {
                    first = rewarmed;
                }
                continue;
            }
            Some(last) if entry.is_gap(resolution, last, bar.ts_event) => {
                lanes.mark_gap(instrument);
            }
            _ => {}
        }
        // The series refused inconsistent bars, a derived bar aggregates consistent ones,
        // and the order was checked above: nothing is left to validate.
        batch.push((instrument, lanes.convert(instrument, &bar)));
    }
    lanes.take(batch);
    first
}

/// The index of `resolution` in [`Resolution::ALL`] (its declaration order).
fn slot_of(resolution: Resolution) -> usize {
    resolution as usize
}

impl Universe {
    /// An empty universe computing `features` at every resolution.
    #[must_use]
    pub fn new(features: Vec<Arc<Compiled>>) -> Self {
        Self {
            layout: Layout::new(features),
            instruments: Vec::new(),
            stores: vec![Store::default(); Resolution::ALL.len()],
            scratch: Scratch::default(),
        }
    }

    /// Instruments held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.instruments.len()
    }

    /// Whether no instrument is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.instruments.is_empty()
    }

    /// Add an instrument; returns its index.
    ///
    /// # Errors
    /// [`FeatureError::Bars`] for a zero capacity.
    pub fn add(&mut self, config: SeriesConfig) -> Result<u32, FeatureError> {
        let (price, size) = (i64::from(config.price_scale), i64::from(config.size_scale));
        let state = FeatureState::with_layout(Arc::clone(&self.layout), price, size)?;
        let series = Series::new(config)?;
        for store in &mut self.stores {
            store.push(&state);
        }
        self.instruments.push(Instrument {
            series,
            fold: IncrementalFold::new(),
        });
        Ok(u32::try_from(self.instruments.len() - 1).unwrap_or(u32::MAX))
    }

    fn instrument(&self, index: u32) -> Result<&Instrument, FeatureError> {
        self.instruments
            .get(index as usize)
            .ok_or(FeatureError::UnknownInstrument {
                index: index as usize,
                len: self.instruments.len(),
            })
    }

    fn instrument_mut(&mut self, index: u32) -> Result<&mut Instrument, FeatureError> {
        let len = self.instruments.len();
        self.instruments
            .get_mut(index as usize)
            .ok_or(FeatureError::UnknownInstrument {
                index: index as usize,
                len,
            })
    }

    /// The 1-minute series of an instrument.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn series(&self, instrument: u32) -> Result<&Series, FeatureError> {
        Ok(&self.instrument(instrument)?.series)
    }

    /// The feature state of an instrument at a resolution (a copy: the universe keeps its
    /// states in lanes, see [`super::lanes`]).
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn state(
        &self,
        instrument: u32,
        resolution: Resolution,
    ) -> Result<FeatureState, FeatureError> {
        self.instrument(instrument)?;
        Ok(self.stores[slot_of(resolution)].gather(&self.layout, instrument as usize))
    }

    /// Every resolution's lanes, to read and update.
    fn all_lanes(&mut self) -> (&mut [Instrument], Vec<Lanes<'_>>) {
        let layout = &self.layout;
        let lanes = self.stores.iter_mut().map(|s| s.lanes(layout)).collect();
        (&mut self.instruments, lanes)
    }

    /// Record that an instrument observed `[start, end)`.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`], or an invalid span.
    pub fn observe(&mut self, instrument: u32, start: u64, end: u64) -> Result<(), FeatureError> {
        Ok(self
            .instrument_mut(instrument)?
            .series
            .observe(start, end)?)
    }

    /// Bulk load an instrument's 1-minute history (through the series' arrival rule), then
    /// warm every resolution's state afresh from the series in one pass each. Returns the
    /// bars accepted.
    ///
    /// # Errors
    /// The view's validation error (nothing is loaded), or an unknown instrument.
    pub fn warm(&mut self, instrument: u32, view: &BarsView<'_>) -> Result<usize, FeatureError> {
        let entry = self.instrument_mut(instrument)?;
        let outcomes = entry.series.extend(view)?;
        if let Some(&newest) = entry.series.view().ts_event.last() {
            let mut streamed_by_pages = Vec::new();
            entry
                .fold
                .on_bulk(&entry.series, newest, &mut streamed_by_pages)?;
        }
        let (instruments, mut lanes) = self.all_lanes();
        let (entry, lane) = (&instruments[instrument as usize], instrument as usize);
        for (resolution, lanes) in Resolution::ALL.into_iter().zip(&mut lanes) {
            entry.rewarm_lane(lanes, lane, resolution)?;
        }
        Ok(outcomes
            .iter()
            .filter(|o| matches!(o, PushOutcome::Appended(_) | PushOutcome::Inserted(_)))
            .count())
    }

    /// Close one minute across the universe: each `(instrument, bar)` goes through its
    /// series, the derived buckets it closes update their resolutions' states, and every
    /// changed row is pushed onto `updated` (per instrument: 1m first, then coarser).
    ///
    /// A large minute given in instrument order runs on several threads (see `parts`).
    ///
    /// # Errors
    /// An unknown instrument or a malformed bar (its refusal names its position in `bars`):
    /// nothing is taken then. A volume overflow stops its part of the minute (the other
    /// parts, on a split minute, complete).
    pub fn close_minute(
        &mut self,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        for (k, (index, bar)) in bars.iter().enumerate() {
            self.instrument(*index)?;
            bar.check().map_err(|error| error.at_index(k))?;
        }
        let ordered = bars.windows(2).all(|pair| pair[0].0 < pair[1].0);
        let parts = if ordered { Self::parts(bars) } else { 1 };
        if parts > 1 {
            if let Some(pool) = pool() {
                return self.close_split(&pool, bars, parts, updated);
            }
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let len = self.instruments.len();
        let (instruments, mut lanes) = self.all_lanes();
        let result = if ordered {
            close_run(instruments, &mut lanes, 0, bars, &mut scratch, updated)
        } else {
            // An instrument may come more than once: runs in which none does, in turn.
            distinct_runs(bars, len).try_for_each(|run| {
                close_run(instruments, &mut lanes, 0, run, &mut scratch, updated)
            })
        };
        drop(lanes);
        self.scratch = scratch;
        result
    }

    /// How many threads close a minute: a large minute given in instrument order (as a
    /// screener closes its universe) takes one per available thread, with at least
    /// `PARALLEL_MIN / 2` bars each (see [`Self::close_split`]). 1: this thread alone.
    fn parts(bars: &[(u32, Bar)]) -> usize {
        if bars.len() < PARALLEL_MIN {
            return 1;
        }
        (*THREADS)
            .min(MAX_PARTS)
            .min(bars.len() / (PARALLEL_MIN / 2))
            .max(1)
    }

    /// Close a minute on `threads` threads of `pool`. The bars are cut into chunks, each
    /// owning the instruments from its first bar's index up to the next chunk's first; the
    /// pool's threads take (and steal) chunks until none is left, so a thread slowed down (a
    /// shared machine) takes fewer. The pool's threads stay up between minutes: a thread
    /// started per minute cost 40-50 µs, and the midnight close of 1,000 instruments measured
    /// 0.94-1.00 ms on the pool against 1.07-1.12 ms on threads of its own. Outputs come back
    /// in chunk order: the same rows and updated list as one thread.
    fn close_split(
        &mut self,
        pool: &rayon::ThreadPool,
        bars: &[(u32, Bar)],
        threads: usize,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let chunks = (threads * CHUNKS_PER_THREAD).min(bars.len()).max(1);
        let cut = |k: usize| k * bars.len() / chunks;
        let len = self.instruments.len();
        // Each chunk owns the instruments from its first bar's index to the next chunk's.
        let ends: Vec<usize> = (1..=chunks)
            .map(|k| bars.get(cut(k)).map_or(len, |next| next.0 as usize))
            .collect();
        let layout = &self.layout;
        let mut lanes_of: Vec<Vec<Lanes<'_>>> = (0..chunks).map(|_| Vec::new()).collect();
        for store in &mut self.stores {
            for (k, part) in store.split(layout, &ends).into_iter().enumerate() {
                lanes_of[k].push(part);
            }
        }
        let mut rest: &mut [Instrument] = &mut self.instruments;
        let mut jobs = Vec::with_capacity(chunks);
        for ((k, lanes), &end) in lanes_of.into_iter().enumerate().zip(&ends) {
            let part = &bars[cut(k)..cut(k + 1)];
            let base = len - rest.len();
            let (mine, others) = std::mem::take(&mut rest).split_at_mut(end - base);
            jobs.push((mine, lanes, base as u32, part));
            rest = others;
        }
        // `collect` keeps chunk order.
        let done: Vec<_> = pool.install(|| {
            jobs.into_par_iter()
                .map_init(
                    Scratch::default,
                    |scratch, (mine, mut lanes, base, part)| {
                        let mut out = Vec::with_capacity(part.len() * 2);
                        let result = close_run(mine, &mut lanes, base, part, scratch, &mut out);
                        (result, out)
                    },
                )
                .collect()
        });
        let mut first = Ok(());
        for (result, mut out) in done {
            updated.append(&mut out);
            if first.is_ok() {
                first = result;
            }
        }
        first
    }

    /// The watermark of every instrument reached `watermark` (quiet minutes on INTERNAL):
    /// close their open buckets by then. In two passes, as [`close_run`]: every fold, then
    /// the states resolution by resolution.
    ///
    /// # Errors
    /// [`FeatureError::Bars`] on a volume overflow: the instruments after it are not
    /// advanced; the buckets the ones before it closed are taken.
    pub fn advance(
        &mut self,
        watermark: u64,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let Scratch {
            closed,
            owed,
            batch,
        } = &mut scratch;
        owed.iter_mut().for_each(Vec::clear);
        let (instruments, mut lanes) = self.all_lanes();
        let folded = instruments
            .iter_mut()
            .enumerate()
            .try_for_each(|(instrument, entry)| {
                closed.clear();
                entry.fold.advance(&entry.series, watermark, closed)?;
                let index = u32::try_from(instrument).unwrap_or(u32::MAX);
                owe_closed(index, closed, updated, |resolution, input| {
                    owed[slot_of(resolution)].push(Owed { instrument, input });
                });
                Ok(())
            });
        let taken = take_all_owed(instruments, &mut lanes, owed, batch);
        drop(lanes);
        self.scratch = scratch;
        folded.and(taken)
    }
}

impl Instrument {
    fn channel(&self) -> Channel {
        self.series.config().channel
    }

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

/// Whether consecutive inputs closing at `prev` and `next` straddle a gap at `resolution`.
fn is_gap(
    coverage: &Coverage,
    channel: Channel,
    resolution: Resolution,
    prev: u64,
    next: u64,
) -> bool {
    let step = resolution.step_ns();
    next - prev > step && (channel == Channel::External || !coverage.covers(prev, next - step))
}

#[path = "universe_rewarm.rs"]
mod rewarm;

#[cfg(test)]
impl Universe {
    /// [`close_run`] over every instrument on this thread (the tests' reference).
    fn close_run_here(
        &mut self,
        bars: &[(u32, Bar)],
        scratch: &mut Scratch,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let (instruments, mut lanes) = self.all_lanes();
        close_run(instruments, &mut lanes, 0, bars, scratch, updated)
    }
}

#[cfg(test)]
#[path = "universe_split_tests.rs"]
mod split_tests;
