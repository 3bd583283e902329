//! Criterion benches: folding a 5,000-bar series (one resolution, and all six at once).
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use spine_core::bars::{
    fold, fold_many, Bar, Channel, Resolution, Series, SeriesConfig, MINUTE_NS,
};

fn series(n: u64) -> Series {
    series_seeded(n, 0)
}

/// A series whose walk depends on `seed`, so a universe of them is not one series repeated.
fn series_seeded(n: u64, seed: u64) -> Series {
    let config = SeriesConfig {
        capacity: n as usize,
        ..SeriesConfig {
            channel: Channel::External,
            price_scale: 2,
            size_scale: 6,
            capacity: 1,
        }
    };
    let Ok(mut series) = Series::new(config) else {
        unreachable!("capacity is positive")
    };
    let day = 19_700 * 1_440 * MINUTE_NS;
    let mut price: i64 = 2_700_000;
    for i in 0..n {
        // A deterministic walk: no RNG dependency needed for a throughput bench.
        price += (((i + seed) * 7_919) % 101) as i64 - 50;
        let ts_event = day - (n - 1 - i) * MINUTE_NS;
        let bar = Bar {
            ts_event,
            open: price,
            high: price + 20,
            low: price - 20,
            close: price + 3,
            volume: 1_000 + (i % 97) as i64,
        };
        let _ = series.push(bar);
    }
    series
}

fn bench(c: &mut Criterion) {
    let series = series(5_000);
    let view = series.view();
    let mut group = c.benchmark_group("fold_5000");
    group.throughput(Throughput::Elements(5_000));
    for resolution in Resolution::DERIVED {
        group.bench_with_input(
            BenchmarkId::new("fold", resolution.name()),
            &resolution,
            |b, &r| {
                b.iter(|| fold(&view, series.coverage(), Channel::External, r));
            },
        );
    }
    group.bench_function("fold_many_all_six", |b| {
        b.iter(|| {
            fold_many(
                &view,
                series.coverage(),
                Channel::External,
                &Resolution::DERIVED,
            )
        });
    });
    group.finish();

    // The batch: a universe of resident series too large for the caches (280 MB of columns),
    // as benches/bench_fold.py folds it, so memory traffic counts as it does there.
    let universe: Vec<Series> = (0..1_000).map(|k| series_seeded(5_000, k)).collect();
    let mut group = c.benchmark_group("fold_1000x5000");
    group.throughput(Throughput::Elements(5_000_000));
    group.sample_size(10);
    group.bench_function("fold_many_all_six", |b| {
        b.iter(|| {
            for series in &universe {
                let _ = fold_many(
                    &series.view(),
                    series.coverage(),
                    Channel::External,
                    &Resolution::DERIVED,
                );
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
