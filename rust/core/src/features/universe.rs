//! The feature fold over a universe of instruments: per instrument, the durable 1-minute
//! series, its incremental fold to the six derived resolutions, and one [`FeatureState`] per
//! resolution (1m native, 5m..1d from derived closed bars). One call closes a minute across
//! the whole universe; rows change only where a bar (or a withheld bucket) closed.
//!
//! Gaps restart a state ([`FeatureState::mark_gap`]): a withheld bucket, or two consecutive
//! inputs further apart than one step where the skipped buckets were not quiet (EXTERNAL: any
//! skipped bucket is a gap; INTERNAL: a skipped bucket is a gap unless it was observed). A
//! repaired bar (a late bar into a closed bucket) rewarms that resolution from the series.

use std::sync::Arc;

use super::error::FeatureError;
use super::registry::Compiled;
use super::state::{BarColumns, FeatureState};
use crate::bars::{
    fold_many, Bar, BarsView, Channel, Closed, Coverage, Derived, IncrementalFold, PushOutcome,
    Resolution, Series, SeriesConfig, WithheldReason,
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
    /// Indexed like [`Resolution::ALL`].
    states: Vec<FeatureState>,
}

/// The universe (see the module docs).
#[derive(Debug, Clone)]
pub struct Universe {
    features: Vec<Arc<Compiled>>,
    instruments: Vec<Instrument>,
    closed: Vec<Closed>,
}

fn slot_of(resolution: Resolution) -> usize {
    Resolution::ALL
        .iter()
        .position(|r| *r == resolution)
        .unwrap_or(0)
}

impl Universe {
    /// An empty universe computing `features` at every resolution.
    #[must_use]
    pub fn new(features: Vec<Arc<Compiled>>) -> Self {
        Self {
            features,
            instruments: Vec::new(),
            closed: Vec::new(),
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
        let states = Resolution::ALL
            .iter()
            .map(|_| FeatureState::new(self.features.clone(), price, size))
            .collect::<Result<Vec<_>, _>>()?;
        self.instruments.push(Instrument {
            series: Series::new(config)?,
            fold: IncrementalFold::new(),
            states,
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

    /// The feature state of an instrument at a resolution.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn state(
        &self,
        instrument: u32,
        resolution: Resolution,
    ) -> Result<&FeatureState, FeatureError> {
        Ok(&self.instrument(instrument)?.states[slot_of(resolution)])
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
        for resolution in Resolution::ALL {
            entry.rewarm(resolution)?;
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
    /// # Errors
    /// An unknown instrument; a malformed bar is counted as rejected by its series and
    /// skipped, never an error for the whole minute.
    pub fn close_minute(
        &mut self,
        bars: &[(u32, Bar)],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        for &(index, _) in bars {
            self.instrument(index)?;
        }
        let mut closed = std::mem::take(&mut self.closed);
        for &(index, bar) in bars {
            let entry = &mut self.instruments[index as usize];
            closed.clear();
            let closed_before = entry.fold.closed_through();
            let outcome = entry.series.push(bar);
            entry
                .fold
                .on_push(&entry.series, &bar, &outcome, &mut closed)?;
            let late = match outcome {
                PushOutcome::Inserted(_) => true,
                PushOutcome::Appended(_) => bar.ts_event <= closed_before,
                _ => continue,
            };
            if late {
                // A late bar changes closed history: rewarm what it touched.
                entry.rewarm_touched(index, &closed, updated)?;
            } else {
                entry.take(Resolution::M1, bar)?;
                updated.push(Updated {
                    instrument: index,
                    resolution: Resolution::M1,
                });
                entry.take_closed(index, &closed, updated)?;
            }
        }
        self.closed = closed;
        Ok(())
    }

    /// The watermark of every instrument reached `watermark` (quiet minutes on INTERNAL):
    /// close their open buckets by then.
    ///
    /// # Errors
    /// [`FeatureError::Bars`] on a volume overflow.
    pub fn advance(
        &mut self,
        watermark: u64,
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let mut closed = std::mem::take(&mut self.closed);
        for (index, entry) in self.instruments.iter_mut().enumerate() {
            closed.clear();
            entry.fold.advance(&entry.series, watermark, &mut closed)?;
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            entry.take_closed(index, &closed, updated)?;
        }
        self.closed = closed;
        Ok(())
    }
}

impl Instrument {
    fn channel(&self) -> Channel {
        self.series.config().channel
    }

    /// Rewarm 1m and every resolution with a closed bucket in `closed` from the series.
    fn rewarm_touched(
        &mut self,
        index: u32,
        closed: &[Closed],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let mut touched = vec![Resolution::M1];
        for event in closed {
            let (Closed::Bar { resolution, .. } | Closed::Withheld { resolution, .. }) = *event;
            if !touched.contains(&resolution) {
                touched.push(resolution);
            }
        }
        for resolution in touched {
            self.rewarm(resolution)?;
            updated.push(Updated {
                instrument: index,
                resolution,
            });
        }
        Ok(())
    }

    /// Feed closed derived buckets to their states.
    fn take_closed(
        &mut self,
        index: u32,
        closed: &[Closed],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        for event in closed {
            let resolution = match *event {
                Closed::Bar {
                    resolution, bar, ..
                } => {
                    self.take(resolution, bar)?;
                    resolution
                }
                Closed::Withheld { resolution, .. } => {
                    // Before its first bar a state is warming up, not interrupted.
                    let state = &mut self.states[slot_of(resolution)];
                    if state.last_ts_event().is_some() {
                        state.mark_gap();
                    }
                    resolution
                }
            };
            updated.push(Updated {
                instrument: index,
                resolution,
            });
        }
        Ok(())
    }

    /// Feed one closed bar of `resolution`: in order it updates the state (after a gap
    /// check); a repair of an earlier bar rewarms the resolution from the series.
    fn take(&mut self, resolution: Resolution, bar: Bar) -> Result<(), FeatureError> {
        let channel = self.channel();
        let state = &mut self.states[slot_of(resolution)];
        match state.last_ts_event() {
            Some(last) if bar.ts_event <= last => return self.rewarm(resolution),
            Some(last)
                if is_gap(
                    self.series.coverage(),
                    channel,
                    resolution,
                    last,
                    bar.ts_event,
                ) =>
            {
                state.mark_gap();
            }
            _ => {}
        }
        state.update_raw(
            bar.ts_event,
            bar.open,
            bar.high,
            bar.low,
            bar.close,
            bar.volume,
        )
    }

    /// Warm `resolution`'s state afresh from the series: its bars split at gaps.
    fn rewarm(&mut self, resolution: Resolution) -> Result<(), FeatureError> {
        let view = self.series.view();
        let channel = self.channel();
        let coverage = self.series.coverage();
        let state = &mut self.states[slot_of(resolution)];
        state.reset();
        if resolution == Resolution::M1 {
            return warm_split(state, &columns_of_view(&view), |prev, next| {
                is_gap(coverage, channel, resolution, prev, next)
            });
        }
        let Some(out) = fold_many(&view, coverage, channel, &[resolution])?.pop() else {
            return Ok(());
        };
        // Withheld spans (other than the still-open bucket) break the input.
        let breaks: Vec<u64> = out
            .withheld
            .iter()
            .filter(|w| w.reason != WithheldReason::NotClosed)
            .map(|w| w.start)
            .collect();
        let columns = columns_of_derived(&out.bars);
        warm_split(state, &columns, |prev, next| {
            is_gap(coverage, channel, resolution, prev, next)
                || breaks.iter().any(|&b| prev <= b && b < next)
        })?;
        // A withheld bucket after the newest bar leaves the row stale: restart now.
        let newest = out.bars.ts_event.last().copied();
        if newest.is_some_and(|newest| breaks.iter().any(|&b| b >= newest)) {
            state.mark_gap();
        }
        Ok(())
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

/// Warm `state` from `columns`, restarting it (a gap) wherever `gap(prev, next)` holds.
fn warm_split(
    state: &mut FeatureState,
    columns: &BarColumns<'_>,
    gap: impl Fn(u64, u64) -> bool,
) -> Result<(), FeatureError> {
    let ts = columns.ts_event;
    let mut from = 0;
    for i in 1..=ts.len() {
        if i == ts.len() || gap(ts[i - 1], ts[i]) {
            state.warm_columns(&slice(columns, from, i))?;
            if i < ts.len() {
                state.mark_gap();
            }
            from = i;
        }
    }
    Ok(())
}

fn slice<'a>(c: &BarColumns<'a>, from: usize, to: usize) -> BarColumns<'a> {
    BarColumns {
        ts_event: &c.ts_event[from..to],
        open: &c.open[from..to],
        high: &c.high[from..to],
        low: &c.low[from..to],
        close: &c.close[from..to],
        volume: &c.volume[from..to],
    }
}

fn columns_of_view<'a>(view: &BarsView<'a>) -> BarColumns<'a> {
    BarColumns {
        ts_event: view.ts_event,
        open: view.open,
        high: view.high,
        low: view.low,
        close: view.close,
        volume: view.volume,
    }
}

fn columns_of_derived(bars: &Derived) -> BarColumns<'_> {
    BarColumns {
        ts_event: &bars.ts_event,
        open: &bars.open,
        high: &bars.high,
        low: &bars.low,
        close: &bars.close,
        volume: &bars.volume,
    }
}
