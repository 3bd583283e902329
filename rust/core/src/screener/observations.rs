//! The observation writer: per (instrument, resolution), the values the patterns read at the
//! row's newest bar, and after a minute close the `svc.pattern_observation` documents of the
//! patterns the rows that changed made, encoded in canonical JSON.
//!
//! A row makes a pattern when its newest bar is newer than the one the writer last read for it
//! (a changed row with the same newest bar, a repair or a restart, is only read): the pattern
//! compares the values last read (the previous bar's) with the new ones. Comparisons are exact
//! (fixed decimals aligned to the finer scale, never `f64`), and any comparison with an ABSENT
//! value, or with a key the universe does not select, is false. So nothing is seen across a
//! gap or during warm-up: a gap restarts every kernel, and each pattern reads a value warming
//! up for at least 14 bars after it.
//!
//! The patterns, in the schema's (and each row's output) order:
//! - `MA_CROSS_UP` / `_DOWN`: `ema_20.value` (fast) crosses `sma_20.value` (slow): before
//!   `ema <= sma`, now `ema > sma` (UP); before `ema >= sma`, now `ema < sma` (DOWN).
//! - `MACD_SIGNAL_CROSS_UP` / `_DOWN`: `macd_12_26_9.line` crosses `macd_12_26_9.signal`, by
//!   the same rule.
//! - `RSI_ENTER_OVERBOUGHT` (before `<= 70`, now `> 70`), `RSI_LEAVE_OVERBOUGHT` (`> 70`, then
//!   `<= 70`), `RSI_ENTER_OVERSOLD` (`>= 30`, then `< 30`), `RSI_LEAVE_OVERSOLD` (`< 30`, then
//!   `>= 30`), on `rsi_14.value`.
//! - `DONCHIAN_BREAKOUT_UP` / `_DOWN`: the bar's close above the previous bar's
//!   `donchian_20.high` / below its `donchian_20.low`. The channel includes the current bar
//!   (its high is at least its close), so only the previous bar's channel can be broken; the
//!   current bar's bound must be present too (no breakout out of warm-up or a gap).
//! - `BOLLINGER_BREAK_UP` / `_DOWN`: `bb_20_2.percent_b` (`(close - lower) / (upper - lower)`)
//!   crosses above 1 (before `<= 1`) / below 0 (before `>= 0`): the close leaves the band.
//!
//! `values` holds the keys the pattern read, as the row serves them: the new bar's values,
//! except a breakout's, which is the bound broken (the previous bar's `donchian_20.high` or
//! `.low`; the close is not a row key). `observation_id` = identity("observation_id",
//! canonical JSON of `{instrument_id, pattern, resolution, ts_event}`, `ts_event` a digit
//! string as in the document).
//!
//! The writer must see every close and advance of its universe (what each returned changed);
//! after a bulk load ([`Universe::warm`]) [`ObservationWriter::prime`] takes the rows as they
//! are, so history makes no observation. A row the writer has never read is only read.

use super::encode;
use super::ids::{check_ids, check_rows, register, take_visit_order};
use super::patterns::{patterns, Pattern, Values, KEYS};
use crate::bars::Resolution;
use crate::features::{FeatureError, FeatureValue, Universe, Updated};
use crate::head::{Head, PATTERN_OBSERVATION};
use crate::identity::identity_hex;
use crate::json::CanonicalWriter;

/// Rows per instrument: one per resolution.
const RESOLUTIONS: usize = Resolution::ALL.len();

/// One pattern a row made, before encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The row.
    pub row: Updated,
    /// The close of the bar that made it.
    pub ts_event: u64,
    /// What it made.
    pub pattern: Pattern,
    /// The values that made it, by row key in key order (none ABSENT).
    pub values: Vec<(&'static str, FeatureValue)>,
}

/// What the writer last read of a row.
#[derive(Debug, Clone, Copy)]
struct Held {
    ts_event: u64,
    values: Values,
}

/// The observing side of a screener's feature rows (see the module docs).
#[derive(Debug, Default, Clone)]
pub struct ObservationWriter {
    /// Per instrument index, its id once registered.
    ids: Vec<Option<Box<str>>>,
    /// Row `(instrument * 7 + resolution)`'s values last read (`None`: never read, or its
    /// state holds no bar).
    held: Vec<Option<Held>>,
    /// The universe's keys in the order its rows are visited, and each one's slot.
    visited: Vec<Box<str>>,
    place: Vec<Option<usize>>,
}

impl ObservationWriter {
    /// A writer that has read no row.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Name instrument `index` as [`super::DeltaWriter::register`] does. Renaming keeps what
    /// was read of it.
    ///
    /// # Errors
    /// As [`super::DeltaWriter::register`].
    pub fn register(&mut self, index: u32, instrument_id: &str) -> Result<(), FeatureError> {
        let instruments = register(&mut self.ids, index, instrument_id, |id| id.into())?;
        self.held.resize(instruments * RESOLUTIONS, None);
        Ok(())
    }

    /// Read every row of `universe` (or of instrument `only`) as it is, seeing nothing: after
    /// a bulk load, so the history it folded makes no observation.
    ///
    /// # Errors
    /// [`FeatureError::UnregisteredInstrument`], [`FeatureError::UnknownInstrument`] for
    /// `only` outside the universe.
    pub fn prime(&mut self, universe: &Universe, only: Option<u32>) -> Result<(), FeatureError> {
        check_ids(&self.ids, universe)?;
        let instruments = match only {
            Some(i) if i as usize >= universe.len() => {
                return Err(FeatureError::UnknownInstrument {
                    index: i as usize,
                    len: universe.len(),
                })
            }
            Some(i) => i..i + 1,
            None => 0..u32::try_from(universe.len()).unwrap_or(u32::MAX),
        };
        self.adopt_keys(universe);
        for instrument in instruments {
            for resolution in Resolution::ALL {
                let row = Updated {
                    instrument,
                    resolution,
                };
                self.held[slot(row)] = self.read(universe, row)?;
            }
        }
        Ok(())
    }

    /// The patterns each of `rows` (what a close or an advance of `universe` reported
    /// changed) made, in row order then pattern order; each row read is held for the next.
    ///
    /// # Errors
    /// [`FeatureError::UnregisteredInstrument`], [`FeatureError::UnknownInstrument`] for a row
    /// outside the universe (nothing is read then).
    pub fn detect(
        &mut self,
        universe: &Universe,
        rows: &[Updated],
    ) -> Result<Vec<Observation>, FeatureError> {
        check_ids(&self.ids, universe)?;
        check_rows(universe, rows)?;
        self.adopt_keys(universe);
        let mut seen = Vec::new();
        for &row in rows {
            let now = self.read(universe, row)?;
            let before = std::mem::replace(&mut self.held[slot(row)], now);
            let (Some(before), Some(now)) = (before, now) else {
                continue;
            };
            if now.ts_event <= before.ts_event {
                continue;
            }
            let close = universe.last_close(row.instrument, row.resolution)?;
            patterns(&before.values, &now.values, close, |pattern, values| {
                seen.push(Observation {
                    row,
                    ts_event: now.ts_event,
                    pattern,
                    values,
                });
            });
        }
        Ok(seen)
    }

    /// [`Self::detect`], each observation encoded as its `svc.pattern_observation` document
    /// (canonical JSON) onto `out`.
    ///
    /// # Errors
    /// As [`Self::detect`].
    pub fn observe(
        &mut self,
        universe: &Universe,
        rows: &[Updated],
        out: &mut Vec<Vec<u8>>,
    ) -> Result<(), FeatureError> {
        for seen in self.detect(universe, rows)? {
            let id = self.ids[seen.row.instrument as usize]
                .as_deref()
                .unwrap_or_default();
            out.push(document(id, &seen));
        }
        Ok(())
    }

    /// Map `universe`'s visit order onto [`KEYS`]' slots (kept while its selection is the
    /// one last seen).
    fn adopt_keys(&mut self, universe: &Universe) {
        if !take_visit_order(universe, &mut self.visited) {
            return;
        }
        self.place = self
            .visited
            .iter()
            .map(|k| KEYS.iter().position(|key| *key == &**k))
            .collect();
    }

    /// A row's newest bar and the values the patterns read (`None` before its first bar).
    fn read(&self, universe: &Universe, row: Updated) -> Result<Option<Held>, FeatureError> {
        let Some(ts_event) = universe.last_ts_event(row.instrument, row.resolution)? else {
            return Ok(None);
        };
        let mut values: Values = [None; KEYS.len()];
        let mut k = 0;
        universe.for_each_value(row.instrument, row.resolution, |_, value| {
            if let Some(&Some(s)) = self.place.get(k) {
                values[s] = Some(value);
            }
            k += 1;
        })?;
        Ok(Some(Held { ts_event, values }))
    }
}

/// Row `row`'s place in `held`.
fn slot(row: Updated) -> usize {
    row.instrument as usize * RESOLUTIONS + row.resolution as usize
}

/// `seen`'s `svc.pattern_observation` document for instrument `instrument_id`.
fn document(instrument_id: &str, seen: &Observation) -> Vec<u8> {
    let mut digits = itoa::Buffer::new();
    let ts_event = digits.format(seen.ts_event);
    let (pattern, resolution) = (seen.pattern.name(), seen.row.resolution.name());
    let mut w = CanonicalWriter::with_capacity(512);
    w.raw(b"{\"instrument_id\":");
    w.string(instrument_id);
    w.raw(b",\"pattern\":");
    w.string(pattern);
    w.raw(b",\"resolution\":");
    w.string(resolution);
    w.raw(b",\"ts_event\":");
    w.string(ts_event);
    w.raw(b"}");
    let id = identity_hex("observation_id", w.as_bytes()).unwrap_or_default();
    w.clear();
    w.raw(b"{\"direction\":");
    w.string(seen.pattern.direction());
    w.raw(b",\"instrument_id\":");
    w.string(instrument_id);
    w.raw(b",\"observation_id\":");
    w.string(&id);
    w.raw(b",\"pattern\":");
    w.string(pattern);
    w.raw(b",\"resolution\":");
    w.string(resolution);
    PATTERN_OBSERVATION.write_schema(&mut w);
    w.raw(b",\"ts_event\":");
    w.string(ts_event);
    w.raw(b",\"values\":{");
    encode::members(&mut w, seen.values.iter().copied(), encode::value);
    w.raw(b"}");
    Head::write_version(&mut w);
    w.raw(b"}");
    w.as_bytes().to_vec()
}
