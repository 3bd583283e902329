//! Criterion bench: the strategy rule kernel over a day of 1-minute bars (an EMA cross with an
//! RSI filter and a Bollinger exit), beside the same features alone (`FeatureState`), so the
//! rules' own cost per bar is the difference.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use spine_core::bars::Bar;
use spine_core::features::{build_spec, FeatureState, KernelKind};
use spine_core::strategy::{FeatureDecl, StrategyKernel};
use std::sync::Arc;

const BARS: usize = 1440;

fn decl(id: &str, kind: &str, params: &[(&str, &str)]) -> FeatureDecl {
    FeatureDecl::of_kind(id, kind, params)
}

fn features() -> Vec<FeatureDecl> {
    vec![
        decl("ema_fast", "ema", &[("period", "10")]),
        decl("ema_slow", "ema", &[("period", "30")]),
        decl("rsi", "rsi", &[("period", "14")]),
        decl("bb", "bollinger", &[("period", "20"), ("k", "2")]),
    ]
}

fn rules() -> Vec<(String, String)> {
    [
        ("entry_long", r#"{"all": [{"key": "ema_fast.value", "op": "CROSSES_ABOVE", "ref": "ema_slow.value"}, {"key": "rsi.value", "op": "LT", "value": "70"}]}"#),
        ("exit_long", r#"{"any": [{"key": "ema_fast.value", "op": "CROSSES_BELOW", "ref": "ema_slow.value"}, {"key": "bar.close", "op": "GT", "ref": "bb.upper"}]}"#),
        ("entry_short", r#"{"key": "bar.close", "op": "CROSSES_BELOW", "ref": "bb.lower"}"#),
        ("exit_short", r#"{"key": "rsi.value", "op": "BETWEEN", "low": "45", "high": "55.5"}"#),
    ]
    .iter()
    .map(|(n, c)| ((*n).to_owned(), (*c).to_owned()))
    .collect()
}

fn bars() -> Vec<Bar> {
    let mut close: i64 = 3_000_000;
    (0..BARS)
        .map(|i| {
            let open = close;
            // A deterministic wobble with a drift, at price scale 2.
            close += ((i as i64 * 7919) % 401) - 200 + if (i / 120) % 2 == 0 { 15 } else { -15 };
            let (hi, lo) = (open.max(close) + 50, open.min(close) - 50);
            Bar::new(
                60_000_000_000 * (i as u64 + 1),
                open,
                hi,
                lo,
                close,
                1_000 + i as i64,
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let bars = bars();
    let Ok(kernel) = StrategyKernel::new(&features(), &rules(), 2, 3) else {
        return;
    };
    let specs: Vec<_> = features()
        .iter()
        .filter_map(|d| {
            let kind = KernelKind::from_implementation(&d.implementation)?;
            let params: Vec<(&str, &str)> = d
                .parameters
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            build_spec(kind, &d.feature_id, &params).ok().map(Arc::new)
        })
        .collect();
    let Ok(state) = FeatureState::new(specs, 2, 3) else {
        return;
    };
    let mut group = c.benchmark_group("strategy_day_1m");
    group.throughput(Throughput::Elements(BARS as u64));
    group.bench_function("features_only", |b| {
        b.iter_batched_ref(
            || state.clone(),
            |s| {
                bars.iter()
                    .map(|bar| u32::from(s.update_raw(bar).is_ok()))
                    .sum::<u32>()
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("features_and_read", |b| {
        b.iter_batched_ref(
            || state.clone(),
            |s| {
                let mut n = 0u32;
                for bar in &bars {
                    n += u32::from(s.update_raw(bar).is_ok());
                    s.for_each_value(|_, v| n += u32::from(!v.is_absent()));
                }
                n
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("kernel_4_rules", |b| {
        b.iter_batched_ref(
            || kernel.clone(),
            |k| {
                bars.iter()
                    .map(|bar| k.update(bar).unwrap_or(0).count_ones())
                    .sum::<u32>()
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
