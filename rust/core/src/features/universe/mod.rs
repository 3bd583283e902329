//! The feature fold over a universe of instruments: per instrument, the durable 1-minute
//! series, its incremental fold to the six derived resolutions, and one [`FeatureState`] per
//! resolution (1m native, 5m..1d from derived closed bars). One call closes a minute across
//! the whole universe; rows change only where a bar (or a withheld bucket) closed, or where
//! buckets closed empty restart a state.
//!
//! Gaps restart a state ([`FeatureState::mark_gap`]): a withheld bucket, or two consecutive
//! inputs further apart than one step where the skipped buckets were not quiet (EXTERNAL: any
//! skipped bucket is a gap; INTERNAL: a skipped bucket is a gap unless it was observed), as
//! soon as such buckets close (see `universe_swept.rs`). A repaired bar (a late bar into a
//! closed bucket) rewarms that resolution from the series. A state only ever holds the
//! buckets its fold has closed, so a rewarm judges nothing a later candle could still
//! complete, and every row equals a warm from the series whatever order the bars came in.

use std::sync::Arc;

use crate::bars::{
    Bar, BarsView, Channel, Coverage, IncrementalFold, PushOutcome, Resolution, Series,
    SeriesConfig,
};
use crate::features::engine::lanes::{Lanes, Store};
use crate::features::engine::layout::Layout;
use crate::features::engine::state::FeatureState;
use crate::features::error::FeatureError;
use crate::features::registry::Compiled;
use crate::features::value::FeatureValue;
use close::{distinct_runs, Run, Scratch};
use threads::{pool, THREADS};

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
    /// The instruments, `block_len` to a block (the last may hold fewer): instrument `i` is
    /// lane `i % block_len` of block `i / block_len`.
    blocks: Vec<Block>,
    block_len: usize,
    len: usize,
}

/// Consecutive instruments with their feature states, closed as one: a split minute hands
/// whole blocks to threads, so nothing is cut or allocated per minute.
#[derive(Debug, Clone, Default)]
struct Block {
    instruments: Vec<Instrument>,
    /// One store per resolution (indexed like [`Resolution::ALL`]), an instrument's state at
    /// its lane in each (see [`crate::features::engine::lanes`]).
    stores: [Store; Resolution::ALL.len()],
    scratch: Scratch,
    /// On a split minute, the rows this block changed.
    out: Vec<Updated>,
}

/// Instruments per block. A resolution's batch runs kernel by kernel over a block's lanes, and
/// longer runs are faster, up to about this length. 256 still cuts 1,000 instruments into four
/// blocks, two per thread on two cores.
const BLOCK_LEN: usize = 256;

/// A minute with at least this many bars splits over threads. Handing blocks to a helper has
/// a fixed cost, which a smaller minute does not win back.
const PARALLEL_MIN: usize = 256;

/// At most this many threads close one minute.
const MAX_THREADS: usize = 8;

/// The index of `resolution` in [`Resolution::ALL`] (its declaration order).
fn slot_of(resolution: Resolution) -> usize {
    resolution as usize
}

impl Block {
    /// Its instruments, their states as lanes (one per resolution), and its scratch.
    fn parts<'a>(
        &'a mut self,
        layout: &'a Arc<Layout>,
    ) -> (
        &'a mut [Instrument],
        [Lanes<'a>; Resolution::ALL.len()],
        &'a mut Scratch,
    ) {
        let lanes = self.stores.each_mut().map(|store| store.lanes(layout));
        (&mut self.instruments, lanes, &mut self.scratch)
    }

    /// Close `bars` (instruments of this block, from index `base`; see [`Run::close`]).
    fn close(
        &mut self,
        layout: &Arc<Layout>,
        base: u32,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        self.run(layout, base, |run| run.close(bars, updated))
    }

    /// `work` on this block as a [`Run`] (its instruments from index `base`).
    fn run<R>(
        &mut self,
        layout: &Arc<Layout>,
        base: u32,
        work: impl FnOnce(Run<'_, '_>) -> R,
    ) -> R {
        let (instruments, mut lanes, scratch) = self.parts(layout);
        work(Run {
            instruments,
            lanes: &mut lanes,
            base,
            scratch,
        })
    }
}

impl Universe {
    /// An empty universe computing `features` at every resolution.
    #[must_use]
    pub fn new(features: Vec<Arc<Compiled>>) -> Self {
        Self::with_block_len(features, BLOCK_LEN)
    }

    /// An empty universe of blocks of `block_len` instruments.
    fn with_block_len(features: Vec<Arc<Compiled>>, block_len: usize) -> Self {
        Self {
            layout: Layout::new(features),
            blocks: Vec::new(),
            block_len,
            len: 0,
        }
    }

    /// Instruments held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no instrument is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add an instrument; returns its index.
    ///
    /// # Errors
    /// [`FeatureError::Bars`] for a zero capacity.
    pub fn add(&mut self, config: SeriesConfig) -> Result<u32, FeatureError> {
        let (price, size) = (i64::from(config.price_scale), i64::from(config.size_scale));
        let state = FeatureState::with_layout(Arc::clone(&self.layout), price, size)?;
        let series = Series::new(config)?;
        if self.len % self.block_len == 0 {
            self.blocks.push(Block::default());
        }
        let Some(block) = self.blocks.last_mut() else {
            unreachable!("a block was pushed above")
        };
        for store in &mut block.stores {
            store.push(&state);
        }
        block.instruments.push(Instrument {
            series,
            fold: IncrementalFold::new(),
        });
        self.len += 1;
        Ok(u32::try_from(self.len - 1).unwrap_or(u32::MAX))
    }

    /// The block and lane of instrument `index`.
    fn locate(&self, index: u32) -> Result<(usize, usize), FeatureError> {
        let index = index as usize;
        if index >= self.len {
            return Err(FeatureError::UnknownInstrument {
                index,
                len: self.len,
            });
        }
        Ok((index / self.block_len, index % self.block_len))
    }

    fn instrument(&self, index: u32) -> Result<&Instrument, FeatureError> {
        let (block, lane) = self.locate(index)?;
        Ok(&self.blocks[block].instruments[lane])
    }

    /// The 1-minute series of an instrument.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn series(&self, instrument: u32) -> Result<&Series, FeatureError> {
        Ok(&self.instrument(instrument)?.series)
    }

    /// The feature state of an instrument at a resolution (a copy: the universe keeps its
    /// states in lanes, see `crate::features::engine::lanes`).
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn state(
        &self,
        instrument: u32,
        resolution: Resolution,
    ) -> Result<FeatureState, FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        Ok(self.blocks[block].stores[slot_of(resolution)].gather(&self.layout, lane))
    }

    /// Visit the row of an instrument at a resolution, value by value in selection order,
    /// then output order, read in place: the values [`Self::state`]'s row holds, without
    /// copying the state.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn for_each_value<'a>(
        &'a self,
        instrument: u32,
        resolution: Resolution,
        visit: impl FnMut(&'a str, FeatureValue),
    ) -> Result<(), FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        let store = &self.blocks[block].stores[slot_of(resolution)];
        store.for_each_value(&self.layout, lane, visit);
        Ok(())
    }

    /// The close of the newest bar an instrument's state at `resolution` took.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn last_ts_event(
        &self,
        instrument: u32,
        resolution: Resolution,
    ) -> Result<Option<u64>, FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        Ok(self.blocks[block].stores[slot_of(resolution)].last_ts_event(lane))
    }

    /// Bars an instrument's state at `resolution` has taken since it started.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn bars_taken(&self, instrument: u32, resolution: Resolution) -> Result<u64, FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        Ok(self.blocks[block].stores[slot_of(resolution)].bars_taken(lane))
    }

    /// The close of the newest bar an instrument's state at `resolution` took, at the
    /// series' price scale: a derived bar closes at its bucket's last 1-minute close, so it
    /// is read from the series (`None` before the first bar, or once that minute is evicted).
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn last_close(
        &self,
        instrument: u32,
        resolution: Resolution,
    ) -> Result<Option<crate::decimal::Fixed>, FeatureError> {
        let Some(end) = self.last_ts_event(instrument, resolution)? else {
            return Ok(None);
        };
        let series = &self.instrument(instrument)?.series;
        let view = series.view();
        let k = view.ts_event.partition_point(|&t| t <= end);
        let inside = k > 0 && view.ts_event[k - 1] + resolution.step_ns() > end;
        Ok(inside.then(|| crate::decimal::Fixed {
            raw: i128::from(view.close[k - 1]),
            scale: series.config().price_scale,
        }))
    }

    /// The selected features, in selection order (every row holds their keys).
    pub fn features(&self) -> &[Arc<Compiled>] {
        &self.layout.features
    }

    /// Record that an instrument observed `[start, end)`.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`], or an invalid span.
    pub fn observe(&mut self, instrument: u32, start: u64, end: u64) -> Result<(), FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        let series = &mut self.blocks[block].instruments[lane].series;
        Ok(series.observe(start, end)?)
    }

    /// Bulk load an instrument's 1-minute history (through the series' arrival rule), then
    /// warm every resolution's state afresh from the series in one pass each. Returns the
    /// bars accepted.
    ///
    /// The fold's watermark moves to the newest bar or the end of what was observed,
    /// whichever is later: a warm closes the buckets the observation covers, as a page does,
    /// so a candle arriving later for an observed minute is late and repairs what it touched.
    ///
    /// # Errors
    /// The view's validation error (nothing is loaded), or an unknown instrument.
    pub fn warm(&mut self, instrument: u32, view: &BarsView<'_>) -> Result<usize, FeatureError> {
        let (block, lane) = self.locate(instrument)?;
        let (instruments, mut lanes, _) = self.blocks[block].parts(&self.layout);
        let entry = &mut instruments[lane];
        let outcomes = entry.series.extend(view)?;
        let newest = entry.series.view().ts_event.last().copied();
        if let Some(through) = newest.max(entry.series.coverage().watermark()) {
            let mut streamed_by_pages = Vec::new();
            entry
                .fold
                .on_bulk(&entry.series, through, &mut streamed_by_pages)?;
        }
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
    /// A large minute given in instrument order runs on several threads (see
    /// `Self::close_split`).
    ///
    /// # Errors
    /// An unknown instrument or a malformed bar (its refusal names its position in `bars`):
    /// nothing is taken then. A volume overflow stops its block's part of the minute; on a
    /// split minute the other blocks complete, on one thread the bars after it are not taken.
    pub fn close_minute(
        &mut self,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        for (k, (index, bar)) in bars.iter().enumerate() {
            self.locate(*index)?;
            bar.check().map_err(|error| error.at_index(k))?;
        }
        let ordered = bars.windows(2).all(|pair| pair[0].0 < pair[1].0);
        if !ordered {
            // An instrument may come more than once: runs in which none does, in turn.
            let len = self.len;
            return distinct_runs(bars, len).try_for_each(|run| self.close_here(run, updated));
        }
        let threads = self.threads_for(bars);
        if threads > 1 {
            if let Some(pool) = pool() {
                return self.close_split(&pool, bars, threads, updated);
            }
        }
        self.close_here(bars, updated)
    }

    /// Close `bars` (each instrument at most once) on this thread: each stretch of bars in
    /// one block in turn, stopping at the first error.
    fn close_here(
        &mut self,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let block_len = self.block_len;
        let block_of = |&(index, _): &(u32, Bar)| index as usize / block_len;
        let mut rest = bars;
        while let Some(first) = rest.first() {
            let block = block_of(first);
            let len = rest
                .iter()
                .position(|b| block_of(b) != block)
                .unwrap_or(rest.len());
            let (stretch, tail) = rest.split_at(len);
            let base = u32::try_from(block * block_len).unwrap_or(u32::MAX);
            self.blocks[block].close(&self.layout, base, stretch, updated)?;
            rest = tail;
        }
        Ok(())
    }

    /// How many threads close `bars`: a large minute given in instrument order (as a
    /// screener closes its universe) takes one per available thread, and at least
    /// `PARALLEL_MIN / 2` bars each. 1: this thread alone.
    fn threads_for(&self, bars: &[(u32, Bar)]) -> usize {
        if bars.len() < PARALLEL_MIN || self.blocks.len() < 2 {
            return 1;
        }
        (*THREADS)
            .min(MAX_THREADS)
            .min(bars.len() / (PARALLEL_MIN / 2))
            .max(1)
    }

    /// Close `bars` (in instrument order) on this thread and `threads - 1` helpers of `pool`,
    /// in jobs of a block's first pass or one of its resolutions (see [`split`]). Rows come
    /// back in block order (as one thread pushes them) with the first error; a block's error
    /// leaves the others to complete.
    fn close_split(
        &mut self,
        pool: &rayon::ThreadPool,
        bars: &[(u32, Bar)],
        threads: usize,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let block_len = self.block_len;
        let mut rest = bars;
        let blocks = self
            .blocks
            .iter_mut()
            .enumerate()
            .filter_map(|(k, block)| {
                let end = (k + 1) * block_len;
                let (mine, tail) = rest.split_at(rest.partition_point(|b| (b.0 as usize) < end));
                rest = tail;
                let base = u32::try_from(k * block_len).unwrap_or(u32::MAX);
                (!mine.is_empty()).then_some((base, block, mine))
            })
            .collect();
        split::close_blocks(pool, threads - 1, &self.layout, blocks, updated)
    }

    /// The watermark of every instrument reached `watermark` (quiet minutes on INTERNAL):
    /// close their open buckets by then. Block by block, each in two passes as
    /// `Run::close`: every fold, then the states resolution by resolution.
    ///
    /// # Errors
    /// [`FeatureError::Bars`] on a volume overflow: the instruments after it are not
    /// advanced; the buckets the ones before it closed are taken.
    pub fn advance(
        &mut self,
        watermark: u64,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let (layout, block_len) = (&self.layout, self.block_len);
        for (k, block) in self.blocks.iter_mut().enumerate() {
            let base = u32::try_from(k * block_len).unwrap_or(u32::MAX);
            block.run(layout, base, |run| run.advance(watermark, updated))?;
        }
        Ok(())
    }
}

impl Instrument {
    fn channel(&self) -> Channel {
        self.series.config().channel
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

mod close;
mod rewarm;
mod split;
mod swept;
pub(crate) mod threads;

#[cfg(test)]
mod split_tests;
