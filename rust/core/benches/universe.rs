//! Criterion benches for the universe feature fold: a cold warm-up of one instrument from
//! 5,000 bars (series, six derived folds, all seven resolutions' default features), the
//! steady-state minute close across 1,000 instruments (successive minutes, so the 5m..1d
//! closes come at their real rates), and the worst minute: 00:00 UTC, when all seven
//! resolutions close at once (as benches/bench_universe.py times it from Python).
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use spine_core::bars::{Bar, BarsView, Channel, SeriesConfig};
use spine_core::features::{default_registry, Universe};

#[path = "common/walk.rs"]
mod walk;
use walk::bar;

const BARS: u64 = 5_000;

fn config() -> SeriesConfig {
    SeriesConfig {
        channel: Channel::External,
        price_scale: 2,
        size_scale: 3,
        capacity: BARS as usize,
    }
}

struct Columns([Vec<i64>; 5], Vec<u64>);

fn columns(instrument: u64) -> Columns {
    let bars: Vec<Bar> = (1..=BARS).map(|m| bar(instrument, m)).collect();
    columns_of(&bars)
}

fn columns_of(bars: &[Bar]) -> Columns {
    Columns(
        [
            bars.iter().map(|b| b.open).collect(),
            bars.iter().map(|b| b.high).collect(),
            bars.iter().map(|b| b.low).collect(),
            bars.iter().map(|b| b.close).collect(),
            bars.iter().map(|b| b.volume).collect(),
        ],
        bars.iter().map(|b| b.ts_event).collect(),
    )
}

fn view(c: &Columns) -> BarsView<'_> {
    BarsView::new(&c.1, c.0.each_ref().map(Vec::as_slice), None)
}

fn bench_warm(c: &mut Criterion) {
    let data = columns(0);
    let mut group = c.benchmark_group("universe_warm");
    group.sample_size(20);
    group.throughput(Throughput::Elements(BARS));
    group.bench_function("one_instrument_5000_bars_all_resolutions", |b| {
        b.iter(|| {
            let mut u = Universe::new(default_registry().features().to_vec());
            let Ok(i) = u.add(config()) else {
                unreachable!("valid config")
            };
            u.warm(i, &view(&data)).ok()
        });
    });
    group.finish();
}

fn bench_minute_close(c: &mut Criterion) {
    let instruments = 1_000u64;
    let mut u = Universe::new(default_registry().features().to_vec());
    for i in 0..instruments {
        let Ok(index) = u.add(config()) else {
            unreachable!("valid config")
        };
        let _ = u.warm(index, &view(&columns(i)));
    }
    let mut minute = BARS;
    let mut updated = Vec::new();
    let mut closes: Vec<(u32, Bar)> = Vec::with_capacity(instruments as usize);
    let mut group = c.benchmark_group("universe_minute_close");
    group.sample_size(20);
    group.throughput(Throughput::Elements(instruments));
    group.bench_function("1000_instruments_successive_minutes", |b| {
        b.iter(|| {
            minute += 1;
            closes.clear();
            closes.extend((0..instruments).map(|i| (i as u32, bar(i, minute))));
            updated.clear();
            u.close_minute(&closes, &mut updated).ok()
        });
    });
    group.finish();
}

/// Each iteration closes the same midnight on a copy of a universe warmed in bulk up to the
/// day's start, after the copy took the day's 1,439 minutes live (both untimed).
fn bench_midnight(c: &mut Criterion) {
    const LIVE: u64 = 1_439;
    let instruments = 1_000u64;
    let midnight = 4 * 1_440; // minute index of 00:00 UTC (bar() counts from a midnight)
    let mut u = Universe::new(default_registry().features().to_vec());
    let mut updated = Vec::new();
    for i in 0..instruments {
        let Ok(index) = u.add(config()) else {
            unreachable!("valid config")
        };
        let first = midnight - BARS + 1;
        let bars: Vec<Bar> = (first..=midnight - LIVE - 1).map(|m| bar(i, m)).collect();
        let _ = u.warm(index, &view(&columns_of(&bars)));
    }
    let minute =
        |m: u64| -> Vec<(u32, Bar)> { (0..instruments).map(|i| (i as u32, bar(i, m))).collect() };
    let day: Vec<Vec<(u32, Bar)>> = (midnight - LIVE..midnight).map(minute).collect();
    let closes = minute(midnight);
    let mut group = c.benchmark_group("universe_midnight_close");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_millis(50));
    group.throughput(Throughput::Elements(instruments));
    group.bench_function("1000_instruments_all_seven_resolutions", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                // As a running screener has it: caches hold what the day's minutes touched.
                let mut copy = u.clone();
                for bars in &day {
                    updated.clear();
                    let _ = copy.close_minute(bars, &mut updated);
                }
                updated.clear();
                let start = Instant::now();
                let _ = copy.close_minute(&closes, &mut updated);
                timed += start.elapsed();
                assert_eq!(updated.len() as u64, 7 * instruments);
            }
            timed
        });
    });
    group.finish();
}

criterion_group!(benches, bench_warm, bench_minute_close, bench_midnight);
criterion_main!(benches);
