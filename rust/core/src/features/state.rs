//! Incremental feature state for one (instrument, resolution): one kernel per selected spec,
//! fed closed bars in strictly increasing `ts_event` order, read as a row keyed
//! `<feature_id>.<output_name>` (a [`BTreeMap`], so iteration order is the key order).
//!
//! Bars are checked before any kernel sees them, so a refused call leaves the state as it was.
//! A gap in the input ([`FeatureState::mark_gap`]) restarts every kernel: their windows would
//! otherwise span unobserved time. Until each is warm again it reports ABSENT `GAP_IN_INPUT`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::FeatureError;
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

    /// Warm from columns of fixed-point bars in one call: check them all, convert them once,
    /// then run each kernel's tight loop over the batch. Returns the number of bars taken.
    ///
    /// # Errors
    /// As [`Self::validate`]; nothing is taken on error.
    pub fn warm_columns(&mut self, columns: &BarColumns<'_>) -> Result<usize, FeatureError> {
        self.validate(columns)?;
        let (ps, ss) = (self.price_scale, self.size_scale);
        let bars: Vec<BarInput> = (0..columns.ts_event.len())
            .map(|i| {
                BarInput::from_raw(
                    columns.ts_event[i],
                    columns.open[i],
                    columns.high[i],
                    columns.low[i],
                    columns.close[i],
                    columns.volume[i],
                    ps,
                    ss,
                )
            })
            .collect();
        self.take(&bars);
        Ok(bars.len())
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
        let Some(last) = bars.last() else {
            return;
        };
        for slot in &mut self.slots {
            if bars.len() == 1 {
                slot.kernel.update(last);
            } else {
                slot.kernel.warm(bars);
            }
        }
        self.last_ts = Some(last.ts_event);
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
mod tests {
    use super::super::registry::{build_spec, default_registry, KernelKind};
    use super::*;

    fn state(ids: &[&str]) -> FeatureState {
        match FeatureState::from_registry(default_registry(), Some(ids), 2, 3) {
            Ok(s) => s,
            Err(e) => unreachable!("{e}"),
        }
    }

    fn push(state: &mut FeatureState, ts: u64, close: i64) -> Result<(), FeatureError> {
        state.update_raw(ts, close, close + 10, close - 10, close, 1500)
    }

    #[test]
    fn warms_exactly_at_the_boundary() {
        let mut s = state(&["sma_20", "rsi_14"]);
        for i in 0..20u64 {
            let row = s.row();
            assert_eq!(
                row.get("sma_20.value"),
                Some(&FeatureValue::Absent(AbsentReason::WarmingUp {
                    bars_seen: i,
                    bars_needed: 20
                }))
            );
            let rsi = row.get("rsi_14.value");
            assert_eq!(rsi.is_some_and(FeatureValue::is_absent), i < 15, "bar {i}");
            assert!(push(&mut s, i + 1, 10_000 + (i as i64 % 3) * 7).is_ok());
        }
        assert!(
            matches!(s.row().get("sma_20.value"), Some(FeatureValue::Decimal(d)) if d.scale == 8)
        );
        assert_eq!(s.last_ts_event(), Some(20));
    }

    #[test]
    fn refuses_bad_input_and_keeps_state() {
        let mut s = state(&["sma_20"]);
        assert!(push(&mut s, 5, 100).is_ok());
        assert!(matches!(
            push(&mut s, 5, 100),
            Err(FeatureError::Unsorted { previous: 5, .. })
        ));
        let cols = BarColumns {
            ts_event: &[6, 7],
            open: &[1, 1],
            high: &[1, 1],
            low: &[1, 1],
            close: &[1, 1],
            volume: &[1],
        };
        assert!(matches!(
            s.warm_columns(&cols),
            Err(FeatureError::LengthMismatch { .. })
        ));
        let inconsistent = BarColumns {
            volume: &[1, 1],
            high: &[1, 0],
            ..cols
        };
        assert!(matches!(
            s.warm_columns(&inconsistent),
            Err(FeatureError::InconsistentBar { index: 1, .. })
        ));
        assert_eq!(s.last_ts_event(), Some(5));
        assert!(s.update_raw(9, 1, 1, 1, 1, -1).is_err());
        assert!(FeatureState::from_registry::<&str>(default_registry(), None, 19, 0).is_err());
        assert!(FeatureState::from_registry::<&str>(default_registry(), None, 0, -1).is_err());
    }

    #[test]
    fn gap_restarts_with_its_own_reason() {
        let mut s = state(&["roc_10"]);
        for i in 0..30 {
            assert!(push(&mut s, i + 1, 1000 + i as i64).is_ok());
        }
        assert!(!s.row().values().any(FeatureValue::is_absent));
        s.mark_gap();
        assert_eq!(
            s.row().get("roc_10.value"),
            Some(&FeatureValue::Absent(AbsentReason::GapInInput))
        );
        for i in 0..11 {
            assert!(s.row().values().all(FeatureValue::is_absent));
            assert!(push(&mut s, 100 + i, 1000).is_ok());
        }
        assert!(matches!(
            s.row().get("roc_10.value"),
            Some(FeatureValue::Decimal(_))
        ));
        s.reset();
        assert!(matches!(
            s.row().get("roc_10.value"),
            Some(FeatureValue::Absent(AbsentReason::WarmingUp {
                bars_seen: 0,
                ..
            }))
        ));
        assert!(push(&mut s, 1, 1000).is_ok());
    }

    #[test]
    fn batch_equals_incremental_over_every_default() {
        let n = 400usize;
        let ts: Vec<u64> = (1..=n as u64).collect();
        let close: Vec<i64> = (0..n)
            .map(|i| 10_000 + ((i * 7919) % 97) as i64 - 48)
            .collect();
        let high: Vec<i64> = close.iter().map(|c| c + 25).collect();
        let low: Vec<i64> = close.iter().map(|c| c - 25).collect();
        let volume: Vec<i64> = (0..n).map(|i| ((i * 31) % 11) as i64 * 1000).collect();
        let cols = BarColumns {
            ts_event: &ts,
            open: &close,
            high: &high,
            low: &low,
            close: &close,
            volume: &volume,
        };
        let Ok(mut batch) = FeatureState::new(default_registry().features().to_vec(), 2, 3) else {
            unreachable!("valid scales");
        };
        let mut incremental = batch.clone();
        assert_eq!(batch.warm_columns(&cols).ok(), Some(n));
        for i in 0..n {
            assert!(incremental
                .update_raw(ts[i], close[i], high[i], low[i], close[i], volume[i])
                .is_ok());
        }
        let row = batch.row();
        assert_eq!(row, incremental.row());
        assert_eq!(row.len(), 19);
        assert!(row.values().all(|v| !v.is_absent()), "{row:?}");
        assert!(matches!(
            row.get("trend_200.sign"),
            Some(FeatureValue::Integer(-1..=1))
        ));
        let keys: Vec<&String> = row.keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn integer_and_nanos_typing() {
        let out = |value_type, scale| OutputSpec {
            name: "x",
            value_type,
            scale,
            refresh: super::super::spec::Refresh::BarClose,
        };
        assert_eq!(
            typed(Raw::Int(-1), &out(ValueType::Integer, 0)),
            FeatureValue::Integer(-1)
        );
        assert_eq!(
            typed(Raw::Int(7), &out(ValueType::UnixNanos, 0)),
            FeatureValue::UnixNanos(7)
        );
        assert!(typed(Raw::Int(-7), &out(ValueType::UnixNanos, 0)).is_absent());
        assert_eq!(
            typed(Raw::Int(3), &out(ValueType::Decimal, 2)),
            FeatureValue::Decimal(Fixed { raw: 300, scale: 2 })
        );
        assert!(typed(Raw::Real(f64::NAN), &out(ValueType::Decimal, 2)).is_absent());
        assert!(typed(Raw::Undefined, &out(ValueType::Decimal, 2)).is_absent());
        assert!(typed(Raw::Real(1.0), &out(ValueType::Integer, 0)).is_absent());
        let custom = build_spec(KernelKind::Sma, "sma_3", &[("period", "3")]);
        assert!(custom.is_ok_and(|c| c.spec.warmup_bars == 3));
    }
}
