//! Incremental feature state for one (instrument, resolution): one kernel per selected spec,
//! fed closed bars in strictly increasing `ts_event` order, read as a row keyed
//! `<feature_id>.<output_name>` (a [`BTreeMap`], so iteration order is the key order).
//!
//! A refused call leaves the state as it was: bars are checked before the kernels take them.
//! A batch is checked and converted block by block into `f64` columns on the stack (one pass
//! over the mantissas, no allocation); a batch of several blocks is saved first and restored
//! when a later block is refused. Every kernel takes each block: the latency-bound
//! recurrences (RSI, ATR, EMA, MACD) together in one loop ([`super::fused`]), the others each
//! in its own tight loop.
//! A gap in the input ([`FeatureState::mark_gap`]) restarts every kernel: their windows would
//! otherwise span unobserved time. Until each is warm again it reports ABSENT `GAP_IN_INPUT`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::block::{BarBlock, BlockBuffer, Inputs, BLOCK};
use super::check::QuickCheck;
use super::error::FeatureError;
use super::fused::{self, Fused};
use super::registry::{AnyKernel, Compiled, Registry};
use super::spec::{OutputSpec, ValueType};
use super::value::{fixed_from_f64, AbsentReason, FeatureValue, Raw};
use super::{BarInput, Kernel};
use crate::decimal::{Fixed, MAX_SCALE};

/// A feature row: `<feature_id>.<output_name>` -> value, in key order.
pub type Row = BTreeMap<String, FeatureValue>;

/// Borrowed columns of closed bars as fixed-point mantissas.
#[derive(Debug, Clone, Copy)]
pub struct BarColumns<'a> {
    /// Close times, nanoseconds, strictly increasing.
    pub ts_event: &'a [u64],
    /// Open mantissas at the price scale.
    pub open: &'a [i64],
    /// High mantissas.
    pub high: &'a [i64],
    /// Low mantissas.
    pub low: &'a [i64],
    /// Close mantissas.
    pub close: &'a [i64],
    /// Volume mantissas at the size scale.
    pub volume: &'a [i64],
}

#[derive(Debug, Clone)]
struct Slot {
    compiled: Arc<Compiled>,
    kernel: AnyKernel,
    after_gap: bool,
}

/// The kernels of one instrument and resolution.
#[derive(Debug, Clone)]
pub struct FeatureState {
    slots: Vec<Slot>,
    price_scale: u8,
    size_scale: u8,
    last_ts: Option<u64>,
}

fn scale_of(what: &'static str, precision: i64) -> Result<u8, FeatureError> {
    u8::try_from(precision)
        .ok()
        .filter(|s| *s <= MAX_SCALE)
        .ok_or(FeatureError::BadPrecision { what, precision })
}

/// Type a raw output at its declared value type and scale; anything undefined or out of
/// range is ABSENT `INPUT_UNAVAILABLE`.
fn typed(raw: Raw, output: &OutputSpec) -> FeatureValue {
    let unavailable = FeatureValue::Absent(AbsentReason::InputUnavailable);
    match (raw, output.value_type) {
        (Raw::Real(x), ValueType::Decimal) => {
            fixed_from_f64(x, output.scale).map_or(unavailable, FeatureValue::Decimal)
        }
        (Raw::Int(i), ValueType::Decimal) => Fixed {
            raw: i128::from(i),
            scale: 0,
        }
        .rescale_half_even(u32::from(output.scale))
        .map_or(unavailable, FeatureValue::Decimal),
        (Raw::Int(i), ValueType::Integer) => FeatureValue::Integer(i),
        (Raw::Int(i), ValueType::UnixNanos) => {
            u64::try_from(i).map_or(unavailable, FeatureValue::UnixNanos)
        }
        _ => unavailable,
    }
}

impl FeatureState {
    /// A state computing `features` for an instrument with these price and size scales.
    ///
    /// # Errors
    /// [`FeatureError::BadPrecision`] for a scale outside `0..=18`.
    pub fn new(
        features: Vec<Arc<Compiled>>,
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, FeatureError> {
        let price_scale = scale_of("price", price_scale)?;
        let size_scale = scale_of("size", size_scale)?;
        let slots = features
            .into_iter()
            .map(|compiled| Slot {
                kernel: compiled.kernel(),
                compiled,
                after_gap: false,
            })
            .collect();
        Ok(Self {
            slots,
            price_scale,
            size_scale,
            last_ts: None,
        })
    }

    /// A state for the features of `registry` named by `ids` (all of them for `None`).
    ///
    /// # Errors
    /// As [`Registry::select`] and [`Self::new`].
    pub fn from_registry<S: AsRef<str>>(
        registry: &Registry,
        ids: Option<&[S]>,
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, FeatureError> {
        Self::new(registry.select(ids)?, price_scale, size_scale)
    }

    /// The price scale bars are read at.
    #[must_use]
    pub fn price_scale(&self) -> u8 {
        self.price_scale
    }

    /// The size scale volumes are read at.
    #[must_use]
    pub fn size_scale(&self) -> u8 {
        self.size_scale
    }

    /// The close time of the newest bar taken, if any.
    #[must_use]
    pub fn last_ts_event(&self) -> Option<u64> {
        self.last_ts
    }

    /// The selected features, in selection order.
    pub fn features(&self) -> impl Iterator<Item = &Arc<Compiled>> {
        self.slots.iter().map(|s| &s.compiled)
    }

    fn check_order(
        &self,
        index: usize,
        ts_event: u64,
        previous: Option<u64>,
    ) -> Result<(), FeatureError> {
        match previous {
            Some(previous) if ts_event <= previous => Err(FeatureError::Unsorted {
                index,
                ts_event,
                previous,
            }),
            _ => Ok(()),
        }
    }

    /// Check columns: equal lengths, strictly increasing after the state's last bar, and
    /// each bar consistent (low <= open, close <= high; volume >= 0).
    ///
    /// # Errors
    /// [`FeatureError`] naming the first offending index.
    pub fn validate(&self, columns: &BarColumns<'_>) -> Result<(), FeatureError> {
        let n = columns.ts_event.len();
        let lengths = [
            columns.open.len(),
            columns.high.len(),
            columns.low.len(),
            columns.close.len(),
            columns.volume.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(FeatureError::LengthMismatch {
                expected: n,
                lengths: lengths.to_vec(),
            });
        }
        // The usual batch is vouched for without a branch per bar; the scan below names the
        // first offending bar of any other.
        let mut check = QuickCheck::default();
        check.columns(columns, 0..n, self.last_ts);
        if check.vouches() {
            return Ok(());
        }
        let mut previous = self.last_ts;
        for i in 0..n {
            let ts = columns.ts_event[i];
            self.check_order(i, ts, previous)?;
            previous = Some(ts);
            let (o, h, l, c) = (
                columns.open[i],
                columns.high[i],
                columns.low[i],
                columns.close[i],
            );
            if h < o.max(c) || l > o.min(c) || columns.volume[i] < 0 {
                return Err(FeatureError::InconsistentBar {
                    index: i,
                    ts_event: ts,
                });
            }
        }
        Ok(())
    }

    /// The bar fields the selected kernels read.
    #[must_use]
    pub fn inputs(&self) -> Inputs {
        self.slots.iter().fold(Inputs::default(), |all, slot| {
            all.union(slot.kernel.inputs())
        })
    }

    /// Warm from columns of fixed-point bars in one call. Returns the number of bars taken.
    ///
    /// One pass per block of bars checks them and converts the fields the kernels read, then
    /// the kernels take the block. A batch of several blocks is taken as it is checked, so the
    /// state is saved first and restored when a later block is refused.
    ///
    /// # Errors
    /// As [`Self::validate`]; nothing is taken on error.
    pub fn warm_columns(&mut self, columns: &BarColumns<'_>) -> Result<usize, FeatureError> {
        let n = columns.ts_event.len();
        let saved = (n > BLOCK).then(|| self.clone());
        if self.take_columns(columns, false) {
            return Ok(n);
        }
        if let Some(saved) = saved {
            *self = saved;
        }
        // The precise scan names the first offending bar, or finds the batch valid after all
        // (values beyond the quick check's range): then it is taken without the quick check.
        self.validate(columns)?;
        self.take_columns(columns, true);
        Ok(n)
    }

    /// Convert and take `columns` block by block; `false` (the block not taken) at the first
    /// block [`QuickCheck`] does not vouch for, unless the batch is `validated`.
    fn take_columns(&mut self, columns: &BarColumns<'_>, validated: bool) -> bool {
        let n = columns.ts_event.len();
        if [
            columns.open,
            columns.high,
            columns.low,
            columns.close,
            columns.volume,
        ]
        .iter()
        .any(|column| column.len() != n)
        {
            return false;
        }
        let (inputs, ps, ss) = (self.inputs(), self.price_scale, self.size_scale);
        let mut buffer = BlockBuffer::new();
        for from in (0..n).step_by(BLOCK) {
            let (block, vouched) = buffer.convert(columns, from..n, self.last_ts, inputs, ps, ss);
            if !(vouched || validated) {
                return false;
            }
            self.take_block(&block);
        }
        true
    }

    /// Take one closed bar given as fixed-point mantissas.
    ///
    /// # Errors
    /// As [`Self::validate`] for a one-bar batch.
    #[allow(clippy::too_many_arguments)]
    pub fn update_raw(
        &mut self,
        ts_event: u64,
        open: i64,
        high: i64,
        low: i64,
        close: i64,
        volume: i64,
    ) -> Result<(), FeatureError> {
        self.validate(&BarColumns {
            ts_event: &[ts_event],
            open: &[open],
            high: &[high],
            low: &[low],
            close: &[close],
            volume: &[volume],
        })?;
        let bar = BarInput::from_raw(
            ts_event,
            open,
            high,
            low,
            close,
            volume,
            self.price_scale,
            self.size_scale,
        );
        self.take(std::slice::from_ref(&bar));
        Ok(())
    }

    /// Warm from bars already converted to `f64`, oldest first. Returns the number taken.
    ///
    /// # Errors
    /// [`FeatureError::Unsorted`] when `ts_event` does not increase strictly; nothing is
    /// taken on error.
    pub fn warm(&mut self, bars: &[BarInput]) -> Result<usize, FeatureError> {
        let mut previous = self.last_ts;
        for (i, bar) in bars.iter().enumerate() {
            self.check_order(i, bar.ts_event, previous)?;
            previous = Some(bar.ts_event);
        }
        self.take(bars);
        Ok(bars.len())
    }

    fn take(&mut self, bars: &[BarInput]) {
        if let [bar] = bars {
            for slot in &mut self.slots {
                slot.kernel.update(bar);
            }
            self.last_ts = Some(bar.ts_event);
            return;
        }
        let mut buffer = BlockBuffer::new();
        for chunk in bars.chunks(BLOCK) {
            self.take_block(&buffer.transpose(chunk));
        }
    }

    /// Every kernel takes `block`: the recurrences together in one loop
    /// ([`super::fused`]), the others alone.
    fn take_block(&mut self, block: &BarBlock<'_>) {
        let Some(&last) = block.ts_event.last() else {
            return;
        };
        // Kernels still seeding (a state's first bars) take them alone, so that every
        // recurrence can join the loop for the rest of the block.
        let seeding = self
            .slots
            .iter()
            .map(|slot| fused::bars_to_seed(&slot.kernel))
            .max()
            .map_or(0, |n| {
                usize::try_from(n).map_or(block.len(), |n| n.min(block.len()))
            });
        if seeding > 0 {
            let first = block.range(0..seeding);
            for slot in &mut self.slots {
                slot.kernel.warm_block(&first);
            }
        }
        let rest = block.tail(seeding);
        let mut together = Fused::default();
        for slot in &mut self.slots {
            if let Some(alone) = together.adopt(&mut slot.kernel) {
                alone.warm_block(&rest);
            }
        }
        together.warm(&rest);
        self.last_ts = Some(last);
    }

    /// The input had a gap: restart every kernel. Values read ABSENT `GAP_IN_INPUT` until
    /// each kernel has seen its `warmupBars` again. Bars must still come after the last one.
    pub fn mark_gap(&mut self) {
        for slot in &mut self.slots {
            slot.kernel.reset();
            slot.after_gap = true;
        }
    }

    /// Forget every bar, as if new (the ordering check restarts too).
    pub fn reset(&mut self) {
        for slot in &mut self.slots {
            slot.kernel.reset();
            slot.after_gap = false;
        }
        self.last_ts = None;
    }

    /// Visit every value in selection order, then output order, without allocating.
    pub fn for_each_value(&self, mut visit: impl FnMut(&str, FeatureValue)) {
        for slot in &self.slots {
            let seen = slot.kernel.bars_seen();
            let needed = slot.kernel.warmup_bars();
            let outputs = &slot.compiled.spec.outputs;
            if seen < needed {
                let reason = if slot.after_gap {
                    AbsentReason::GapInInput
                } else {
                    AbsentReason::WarmingUp {
                        bars_seen: seen,
                        bars_needed: needed,
                    }
                };
                for key in &slot.compiled.keys {
                    visit(key, FeatureValue::Absent(reason));
                }
                continue;
            }
            let raw = slot.kernel.values();
            for ((key, output), value) in slot.compiled.keys.iter().zip(outputs).zip(raw) {
                visit(key, typed(value, output));
            }
        }
    }

    /// The current row.
    #[must_use]
    pub fn row(&self) -> Row {
        let mut row = Row::new();
        self.for_each_value(|key, value| {
            row.insert(key.to_owned(), value);
        });
        row
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
