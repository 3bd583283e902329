//! The screener's rows as columns: per registered row key a column of exact mantissas at the
//! key's scale with an ABSENT flag, and per row its instrument and resolution.
//!
//! A row is one (instrument, resolution); [`ScreenTable::upsert`] replaces its values in place
//! (no allocation once the row exists), which is what the screener does for every changed row
//! at each minute close. DECIMAL, INTEGER and UNIX_NANOS values all land on one `i128` grid
//! per key (an integer or a timestamp at scale `s` is `v * 10^s`), so comparisons and sorts
//! are exact integer operations.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::bars::Resolution;
use crate::decimal::{Fixed, MAX_SCALE};
use crate::features::{FeatureState, FeatureValue, Registry};
use crate::screener::column::{Column, Values};
use crate::screener::error::ScreenError;

/// One cell: the mantissa at the key's scale, or `None` for ABSENT.
pub type Cell = Option<i128>;

/// A row key `^[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}$`.
fn is_row_key(key: &str) -> bool {
    let part = |p: &str| {
        (1..=64).contains(&p.len())
            && p.as_bytes()[0].is_ascii_lowercase()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    key.split_once('.').is_some_and(|(f, o)| part(f) && part(o))
}

/// The screener's row table.
#[derive(Debug, Clone, Default)]
pub struct ScreenTable {
    /// Row keys in declaration order, with their scales (shared with the screens compiled
    /// against the table, which check it before evaluating).
    pub(crate) keys: Arc<[(String, u8)]>,
    /// Key -> column index; ordered, so "allowed" lists read in key order.
    index: BTreeMap<String, usize>,
    pub(crate) columns: Vec<Column>,
    /// Interned instrument ids, by instrument index.
    instruments: Vec<String>,
    instrument_of: HashMap<String, u32>,
    /// Each instrument's position in instrument_id order (the sort tie-break).
    pub(crate) instrument_rank: Vec<u32>,
    /// Per row.
    pub(crate) row_instrument: Vec<u32>,
    pub(crate) row_resolution: Vec<Resolution>,
    row_of: HashMap<(u32, Resolution), u32>,
    /// One row's cells, reused by [`ScreenTable::upsert_state`].
    scratch: Vec<Cell>,
}

impl ScreenTable {
    /// A table over `keys` (row key, scale), in the order given.
    ///
    /// # Errors
    /// [`ScreenError::Table`] for a key that is not a row key, a repeated key, or a scale
    /// above [`MAX_SCALE`].
    pub fn new<S: AsRef<str>>(keys: &[(S, u8)]) -> Result<Self, ScreenError> {
        let mut table = Self::default();
        let mut declared = Vec::with_capacity(keys.len());
        for (i, (key, scale)) in keys.iter().enumerate() {
            let key = key.as_ref();
            if !is_row_key(key) {
                return Err(ScreenError::table(format!(
                    "key {key:?} is not a row key; allowed: <feature_id>.<output> matching ^[a-z][a-z0-9_]{{0,63}}\\.[a-z][a-z0-9_]{{0,63}}$"
                )));
            }
            if *scale > MAX_SCALE {
                return Err(ScreenError::table(format!(
                    "key {key:?} has scale {scale}; allowed: 0..={MAX_SCALE}"
                )));
            }
            if table.index.insert(key.to_owned(), i).is_some() {
                return Err(ScreenError::table(format!(
                    "key {key:?} is declared twice; keys are unique"
                )));
            }
            declared.push((key.to_owned(), *scale));
            table.columns.push(Column {
                values: Values::Narrow(Vec::new()),
                present: Vec::new(),
            });
        }
        table.keys = declared.into();
        Ok(table)
    }

    /// A table over every output of `registry`, in registry order, at the declared scales.
    ///
    /// # Errors
    /// As [`Self::new`] (a registry's keys are unique row keys, so none in practice).
    pub fn from_registry(registry: &Registry) -> Result<Self, ScreenError> {
        let keys: Vec<(String, u8)> = registry
            .features()
            .iter()
            .flat_map(|f| {
                f.keys
                    .iter()
                    .cloned()
                    .zip(f.spec.outputs.iter().map(|o| o.scale))
            })
            .collect();
        Self::new(&keys)
    }

    /// Replace (or add) a row from a feature state's current values, without building the
    /// row: each key lands in its column, exactly (see [`Self::cell`]).
    ///
    /// # Errors
    /// [`ScreenError::Table`] for a key of the state outside the table, a table key the
    /// state lacks, or a value finer than its key's scale.
    pub fn upsert_state(
        &mut self,
        instrument_id: &str,
        resolution: Resolution,
        state: &FeatureState,
    ) -> Result<usize, ScreenError> {
        let mut cells = std::mem::take(&mut self.scratch);
        cells.clear();
        cells.resize(self.keys.len(), None);
        let mut seen = vec![false; self.keys.len()];
        let mut refusal = None;
        let mut next = 0;
        state.for_each_value(|key, value| {
            if refusal.is_some() {
                return;
            }
            // Same order as the table (a table from the same registry): no lookup.
            let column = match self.keys.get(next) {
                Some((name, _)) if name == key => Some(next),
                _ => self.key_index(key),
            };
            next += 1;
            match column.map(|c| (c, self.cell(c, value))) {
                Some((c, Ok(cell))) => {
                    cells[c] = cell;
                    seen[c] = true;
                }
                Some((_, Err(e))) => refusal = Some(e),
                None => {
                    refusal = Some(ScreenError::table(format!(
                        "row key {key:?} is not in the table; allowed: {}",
                        self.allowed_keys()
                    )));
                }
            }
        });
        if refusal.is_none() {
            if let Some(missing) = seen.iter().position(|s| !s) {
                refusal = Some(ScreenError::table(format!(
                    "the row has no value for {:?}; a row holds every key of the table",
                    self.keys[missing].0
                )));
            }
        }
        let result = match refusal {
            Some(e) => Err(e),
            None => self.upsert(instrument_id, resolution, &cells),
        };
        self.scratch = cells;
        result
    }

    /// The keys with their scales, in declaration order (the order of [`Self::upsert`]'s cells).
    #[must_use]
    pub fn keys(&self) -> &[(String, u8)] {
        &self.keys
    }

    /// The column index of `key`.
    #[must_use]
    pub fn key_index(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The registered keys, comma separated, in key order (for refusals).
    #[must_use]
    pub fn allowed_keys(&self) -> String {
        self.index
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.row_instrument.len()
    }

    /// Whether the table holds no row.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.row_instrument.is_empty()
    }

    /// The instrument id and resolution of row `row`.
    #[must_use]
    pub fn row_id(&self, row: usize) -> Option<(&str, Resolution)> {
        let instrument = *self.row_instrument.get(row)?;
        let name = self.instruments.get(instrument as usize)?;
        Some((name.as_str(), self.row_resolution[row]))
    }

    /// The instrument index and resolution of row `row`.
    #[must_use]
    pub fn row_key(&self, row: usize) -> Option<(u32, Resolution)> {
        Some((
            *self.row_instrument.get(row)?,
            *self.row_resolution.get(row)?,
        ))
    }

    /// The id of instrument `index` (indexes are dense, from 0, in order of first upsert, and
    /// stay valid: removing rows never forgets an instrument).
    #[must_use]
    pub fn instrument_id(&self, index: u32) -> Option<&str> {
        self.instruments.get(index as usize).map(String::as_str)
    }

    /// The instrument index of an id the table holds.
    pub(crate) fn instrument(&self, instrument_id: &str) -> Option<u32> {
        self.instrument_of.get(instrument_id).copied()
    }

    /// Number of instruments ever upserted.
    #[must_use]
    pub fn instruments(&self) -> usize {
        self.instruments.len()
    }

    /// A cell from a feature value at `key`'s scale (exact; a decimal finer than the key's
    /// scale is refused, never rounded).
    ///
    /// # Errors
    /// [`ScreenError::Table`] naming the key.
    pub fn cell(&self, key: usize, value: FeatureValue) -> Result<Cell, ScreenError> {
        let (name, scale) = self
            .keys
            .get(key)
            .ok_or_else(|| ScreenError::table(format!("no key at index {key}")))?;
        let out_of_range = || {
            ScreenError::table(format!(
                "{name}: {value:?} does not fit the key's scale {scale}"
            ))
        };
        let widen = |v: i128, from: u8| -> Result<Cell, ScreenError> {
            let factor = 10i128.pow(u32::from(scale.checked_sub(from).ok_or_else(out_of_range)?));
            v.checked_mul(factor).map(Some).ok_or_else(out_of_range)
        };
        match value {
            FeatureValue::Absent(_) => Ok(None),
            FeatureValue::Decimal(Fixed { raw, scale: from }) => widen(raw, from),
            FeatureValue::Integer(i) => widen(i128::from(i), 0),
            FeatureValue::UnixNanos(ns) => widen(i128::from(ns), 0),
        }
    }

    /// A cell from a wire value's text (`"54.1234"`, `"-1"`, a nanosecond string) at `key`'s
    /// scale, through the core decimal parser.
    ///
    /// # Errors
    /// [`ScreenError::Table`] naming the key and the decimal refusal.
    pub fn parse_cell(&self, key: usize, text: &str) -> Result<Cell, ScreenError> {
        let (name, scale) = self
            .keys
            .get(key)
            .ok_or_else(|| ScreenError::table(format!("no key at index {key}")))?;
        Fixed::parse(text, u32::from(*scale))
            .map(|f| Some(f.raw))
            .map_err(|e| ScreenError::table(format!("{name}: {e}")))
    }

    /// Replace (or add) the row of `instrument_id` at `resolution`: `cells[k]` is the value of
    /// key `k` (declaration order). Returns the row index.
    ///
    /// # Errors
    /// [`ScreenError::Table`] when `cells` does not have one cell per key.
    pub fn upsert(
        &mut self,
        instrument_id: &str,
        resolution: Resolution,
        cells: &[Cell],
    ) -> Result<usize, ScreenError> {
        if cells.len() != self.keys.len() {
            return Err(ScreenError::table(format!(
                "a row has {} values; the table has {} keys",
                cells.len(),
                self.keys.len()
            )));
        }
        let instrument = self.intern(instrument_id)?;
        let row = match self.row_of.get(&(instrument, resolution)) {
            Some(&row) => row as usize,
            None => {
                let row = self.row_instrument.len();
                let id = u32::try_from(row)
                    .map_err(|_| ScreenError::table("the table is full (2^32 rows)"))?;
                self.row_of.insert((instrument, resolution), id);
                self.row_instrument.push(instrument);
                self.row_resolution.push(resolution);
                for column in &mut self.columns {
                    column.values.push_zero();
                    column.present.push(false);
                }
                row
            }
        };
        for (column, cell) in self.columns.iter_mut().zip(cells) {
            column.values.set(row, cell.unwrap_or(0));
            column.present[row] = cell.is_some();
        }
        Ok(row)
    }

    /// Drop the row of `instrument_id` at `resolution` (a retired row). Returns whether it
    /// was held. The last row moves into its place.
    pub fn remove(&mut self, instrument_id: &str, resolution: Resolution) -> bool {
        let Some(instrument) = self.instrument(instrument_id) else {
            return false;
        };
        let Some(row) = self.row_of.remove(&(instrument, resolution)) else {
            return false;
        };
        let row = row as usize;
        self.row_instrument.swap_remove(row);
        self.row_resolution.swap_remove(row);
        for column in &mut self.columns {
            column.values.swap_remove(row);
            column.present.swap_remove(row);
        }
        if let (Some(&moved), Some(&res)) =
            (self.row_instrument.get(row), self.row_resolution.get(row))
        {
            // The former last row now lives at `row` (row < len fits u32: it did before).
            self.row_of
                .insert((moved, res), u32::try_from(row).unwrap_or(u32::MAX));
        }
        true
    }

    /// The index of an instrument id, added (and the id order refreshed) when new.
    fn intern(&mut self, instrument_id: &str) -> Result<u32, ScreenError> {
        if let Some(&i) = self.instrument_of.get(instrument_id) {
            return Ok(i);
        }
        let i = u32::try_from(self.instruments.len())
            .map_err(|_| ScreenError::table("the table is full (2^32 instruments)"))?;
        self.instruments.push(instrument_id.to_owned());
        self.instrument_of.insert(instrument_id.to_owned(), i);
        // Positions in id order, kept by insertion: O(n) once per new instrument, never per
        // screen.
        let position = self
            .instruments
            .iter()
            .filter(|other| other.as_str() < instrument_id)
            .count();
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        for rank in &mut self.instrument_rank {
            if *rank >= position {
                *rank += 1;
            }
        }
        self.instrument_rank.push(position);
        Ok(i)
    }
}
