//! Tests of [`super::FeatureState`]: warm-up boundaries, refusals that keep the state, gaps,
//! batches against bar-by-bar updates, value typing.

use super::values::typed;
use super::*;
use crate::bars::BarsView;
use crate::decimal::Fixed;
use crate::features::registry::{build_spec, default_registry, KernelKind};
use crate::features::spec::{OutputSpec, ValueType};
use crate::features::value::{AbsentReason, Raw};

/// A bar of mantissas, in column order.
fn raw(ts_event: u64, open: i64, high: i64, low: i64, close: i64, volume: i64) -> Bar {
    Bar::new(ts_event, open, high, low, close, volume)
}

fn state(ids: &[&str]) -> FeatureState {
    match FeatureState::from_registry(default_registry(), Some(ids), 2, 3) {
        Ok(s) => s,
        Err(e) => unreachable!("{e}"),
    }
}

fn push(state: &mut FeatureState, ts: u64, close: i64) -> Result<(), FeatureError> {
    state.update_raw(&raw(ts, close, close + 10, close - 10, close, 1500))
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
    assert!(matches!(s.row().get("sma_20.value"), Some(FeatureValue::Decimal(d)) if d.scale == 8));
    assert_eq!(s.last_ts_event(), Some(20));
}

#[test]
fn refuses_bad_input_and_keeps_state() {
    let mut s = state(&["sma_20"]);
    assert!(push(&mut s, 5, 100).is_ok());
    assert!(matches!(
        push(&mut s, 5, 100),
        Err(FeatureError::Bars(BarsError::Unsorted { previous: 5, .. }))
    ));
    let cols = BarsView {
        ts_event: &[6, 7],
        open: &[1, 1],
        high: &[1, 1],
        low: &[1, 1],
        close: &[1, 1],
        volume: &[1],
        sequence: None,
    };
    assert!(matches!(
        s.warm_columns(&cols),
        Err(FeatureError::Bars(BarsError::LengthMismatch { .. }))
    ));
    let inconsistent = BarsView {
        volume: &[1, 1],
        sequence: None,
        high: &[1, 0],
        ..cols
    };
    assert!(matches!(
        s.warm_columns(&inconsistent),
        Err(FeatureError::Bars(BarsError::InconsistentBar {
            index: 1,
            ..
        }))
    ));
    assert_eq!(s.last_ts_event(), Some(5));
    assert!(s.update_raw(&raw(9, 1, 1, 1, 1, -1)).is_err());
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
    let cols = BarsView::new(&ts, [&close, &high, &low, &close, &volume], None);
    let Ok(mut batch) = FeatureState::new(default_registry().features().to_vec(), 2, 3) else {
        unreachable!("valid scales");
    };
    let mut incremental = batch.clone();
    assert_eq!(batch.warm_columns(&cols).ok(), Some(n));
    for i in 0..n {
        assert!(incremental
            .update_raw(&raw(ts[i], close[i], high[i], low[i], close[i], volume[i]))
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
        refresh: crate::features::spec::Refresh::BarClose,
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

/// Columns of `n` bars: a deterministic wavy close around `base`, with `high`/`low` around it.
fn columns(n: usize, base: i64) -> [Vec<i64>; 5] {
    let close: Vec<i64> = (0..n)
        .map(|i| base + ((i * 7919) % 97) as i64 - 48)
        .collect();
    let high = close.iter().map(|c| c + 25).collect();
    let low = close.iter().map(|c| c - 25).collect();
    let volume = (0..n).map(|i| ((i * 31) % 11) as i64 * 1000).collect();
    [close.clone(), high, low, close, volume]
}

/// Bars `range` of columns.
fn part(c: &[Vec<i64>; 5], range: std::ops::Range<usize>) -> [Vec<i64>; 5] {
    c.clone().map(|column| column[range.clone()].to_vec())
}

fn view<'a>(ts: &'a [u64], c: &'a [Vec<i64>; 5]) -> BarsView<'a> {
    BarsView::new(ts, c.each_ref().map(Vec::as_slice), None)
}

#[test]
fn a_bad_bar_in_a_later_block_leaves_the_state_as_it_was() {
    let n = 3 * super::BLOCK + 17;
    let ts: Vec<u64> = (1..=n as u64).map(|t| 1_000 + t).collect();
    let good = columns(n, 10_000);
    let mut s = state(&["sma_20", "rsi_14", "atr_14", "bb_20_2", "macd_12_26_9"]);
    assert_eq!(
        s.warm_columns(&view(&ts[..40], &part(&good, 0..40))).ok(),
        Some(40)
    );
    let (before, last) = (s.row(), s.last_ts_event());
    let rest = |c: &[Vec<i64>; 5]| part(c, 40..n);

    let bad_index = 2 * super::BLOCK + 5;
    let mut inconsistent = rest(&good);
    inconsistent[1][bad_index] = inconsistent[3][bad_index] - 1; // high below the close
    assert!(matches!(
        s.warm_columns(&view(&ts[40..], &inconsistent)),
        Err(FeatureError::Bars(BarsError::InconsistentBar { index, .. })) if index == bad_index
    ));
    assert_eq!((s.row(), s.last_ts_event()), (before.clone(), last));

    let mut unsorted_ts = ts[40..].to_vec();
    unsorted_ts[bad_index] = unsorted_ts[bad_index - 1];
    assert!(matches!(
        s.warm_columns(&view(&unsorted_ts, &rest(&good))),
        Err(FeatureError::Bars(BarsError::Unsorted { index, .. })) if index == bad_index
    ));
    assert_eq!((s.row(), s.last_ts_event()), (before, last));

    assert_eq!(
        s.warm_columns(&view(&ts[40..], &rest(&good))).ok(),
        Some(n - 40)
    );
    assert_eq!(s.last_ts_event(), ts.last().copied());
}

#[test]
fn batches_the_quick_check_cannot_vouch_for_are_still_taken() {
    // Negative prices and timestamps from 2^63 on are valid, outside the quick check's range.
    let n = 2 * super::BLOCK + 3;
    for (base, first_ts) in [(-5_000, 1_000u64), (10_000, 1 << 63)] {
        let ts: Vec<u64> = (0..n as u64).map(|t| first_ts + t).collect();
        let c = columns(n, base);
        let ids = default_registry()
            .features()
            .iter()
            .map(|f| f.spec.feature_id.as_str())
            .collect::<Vec<_>>();
        let (mut batch, mut single) = (state(&ids), state(&ids));
        assert_eq!(batch.warm_columns(&view(&ts, &c)).ok(), Some(n));
        for i in 0..n {
            assert!(single
                .update_raw(&raw(ts[i], c[0][i], c[1][i], c[2][i], c[3][i], c[4][i]))
                .is_ok());
        }
        assert_eq!(batch.row(), single.row());
        assert_eq!(batch.last_ts_event(), Some(first_ts + n as u64 - 1));
    }
}

#[test]
fn kernels_of_one_kind_beyond_the_first_take_blocks_alone() {
    let spec = |kind, id, params: &[(&str, &str)]| match build_spec(kind, id, params) {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => unreachable!("{e}"),
    };
    let features = vec![
        spec(KernelKind::Rsi, "rsi_14", &[("period", "14")]),
        spec(KernelKind::Rsi, "rsi_3", &[("period", "3")]),
        spec(KernelKind::Ema, "ema_5", &[("period", "5")]),
        spec(KernelKind::Ema, "ema_50", &[("period", "50")]),
        spec(KernelKind::Atr, "atr_2", &[("period", "2")]),
        spec(
            KernelKind::Macd,
            "macd_3_7_2",
            &[("fast", "3"), ("slow", "7"), ("signal", "2")],
        ),
    ];
    let Ok(mut batch) = FeatureState::new(features, 2, 3) else {
        unreachable!("valid scales");
    };
    let mut single = batch.clone();
    let n = 700;
    let ts: Vec<u64> = (1..=n as u64).collect();
    let c = columns(n, 20_000);
    // Split batches: a state's first bars seed the kernels, later blocks fuse them.
    for (from, to) in [(0, 5), (5, 300), (300, n)] {
        assert!(batch
            .warm_columns(&view(&ts[from..to], &part(&c, from..to)))
            .is_ok());
        for i in from..to {
            assert!(single
                .update_raw(&raw(ts[i], c[0][i], c[1][i], c[2][i], c[3][i], c[4][i]))
                .is_ok());
        }
        assert_eq!(batch.row(), single.row());
    }
}

/// SMA, ROC, Bollinger and realised volatility read another kernel's ring of closes, and
/// VWAP, Donchian and the volume z-score one of bars, when their layout has one long enough
/// (`layout.rs`):
/// their rows equal those of a state keeping its own window, bit for bit, through warm-up,
/// batches, restarts and gaps, whichever kernel is the source.
#[test]
fn views_equal_kernels_of_their_own() {
    let bars: Vec<Bar> = (1..=700_u64)
        .map(|t| {
            let close = 10_000 + ((t * 7919) % 997) as i64 - 400 * i64::from(t % 50 == 0);
            raw(
                t,
                close,
                close + 25,
                close - 25,
                close,
                100 + (t % 13) as i64,
            )
        })
        .collect();
    let selections: [&[&str]; 10] = [
        &["sma_20", "roc_10", "trend_200", "bb_20_2"],
        &["rvol_20", "trend_200", "sma_20"],
        &["roc_10", "rvol_20"],
        &["roc_10", "bb_20_2", "sma_20"],
        &["sma_20", "roc_10"],
        &["roc_10", "sma_20", "ema_20"],
        &["bb_20_2", "roc_10"],
        &["vol_z_20", "ema_20", "vwap_20"],
        &["donchian_20", "vwap_20", "vol_z_20"],
        &["vwap_20", "atr_14", "donchian_20"],
    ];
    for ids in selections {
        let mut viewing = state(ids);
        let mut own: Vec<FeatureState> = ids.iter().map(|id| state(&[id])).collect();
        let kept = viewing.layout().kernels.len();
        assert!(kept < ids.len(), "{ids:?}: {kept} kernels, so no view");
        for (i, bar) in bars.iter().enumerate() {
            let all = std::iter::once(&mut viewing).chain(own.iter_mut());
            for s in all {
                if i % 211 == 150 {
                    s.mark_gap();
                }
                if i % 97 == 0 {
                    s.reset();
                }
                assert!(s.update_raw(bar).is_ok());
            }
            if i % 23 == 0 || i > 690 {
                let row = viewing.row();
                for single in &own {
                    for (key, value) in single.row() {
                        assert_eq!(row.get(&key), Some(&value), "{ids:?} bar {i} {key}");
                    }
                }
            }
        }
    }
}

/// The default registry's SMA 20, Bollinger 20, ROC 10 and realised volatility 20 read the
/// 200-bar trend's ring of closes, and VWAP 20 and Donchian 20 the volume z-score's ring of
/// bars: six of its twelve features keep state.
#[test]
fn default_layout_keeps_six_kernels() {
    let s = FeatureState::from_registry::<&str>(default_registry(), None, 2, 3);
    let Ok(s) = s else { unreachable!() };
    assert_eq!(s.layout().kernels.len(), 6);
    assert_eq!(s.row().len(), 19);
}

#[test]
fn counts_the_bars_it_takes_across_a_gap_until_reset() {
    let mut s = state(&["sma_20"]);
    for ts in 1..=5u64 {
        assert!(push(&mut s, ts, 100).is_ok());
    }
    let batch: Vec<BarInput> = (6..=45u64)
        .map(|ts| convert_bar(s.inputs(), 2, 3, &raw(ts, 100, 110, 90, 100, 1500)))
        .collect();
    assert_eq!(s.warm(&batch).ok(), Some(40));
    s.mark_gap();
    assert!(push(&mut s, 46, 100).is_ok());
    assert!(
        push(&mut s, 1, 100).is_err(),
        "refused bars are not counted"
    );
    assert_eq!(s.bars_taken(), 46);
    s.reset();
    assert_eq!(s.bars_taken(), 0);
}
