//! Criterion benches for the screener's live turn (`Turn::take`) over 1,000 instruments, from
//! the node's raw event payloads (an `svc.bar_envelope` of one bar with its coverage, about
//! 800 bytes each) to the rows closed, every stream event framed and every observation
//! written: a day minute (23:59, 1m closes) and midnight (all seven resolutions close), each
//! on a copy of the universe and writers as they stand just before it (untimed). The reader
//! alone is timed too: the same payloads for a feed that serves none of them.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use spine_core::bars::{write_bar_row, Bar, BarsView, Channel, SeriesConfig, MINUTE_NS};
use spine_core::features::{default_registry, Universe};
use spine_core::screener::{Book, DeltaWriter, Deltas, ObservationWriter, Turn};

#[path = "common/walk.rs"]
mod walk;
use walk::bar;

const INSTRUMENTS: u64 = 1_000;
const BARS: u64 = 5_000;
const LIVE: u64 = 1_439;
const MIDNIGHT: u64 = 4 * 1_440; // minute index of 00:00 UTC (bar() counts from a midnight)
const FEED: &str = "http://127.0.0.1:8700";

/// The rows as a turn finds them.
#[derive(Clone)]
struct Rows {
    universe: Universe,
    book: Book,
    deltas: DeltaWriter,
    observations: ObservationWriter,
}

fn id(i: u64) -> String {
    format!("SYM{i}USDT.SIM")
}

/// The universe warmed in bulk up to the day's start, then live up to (not including)
/// `minute`, with every row published and read once, every sequence `minute - 1`.
fn rows(minute: u64) -> Rows {
    let config = SeriesConfig::new(Channel::External, 2, 3).unwrap_or_else(|_| unreachable!());
    let mut universe = Universe::new(default_registry().features().to_vec());
    let (mut book, mut deltas, mut observations) =
        (Book::new(), DeltaWriter::new(), ObservationWriter::new());
    for i in 0..INSTRUMENTS {
        let index = universe.add(config).unwrap_or_else(|_| unreachable!());
        book.add(&id(i), FEED);
        let _ = book.set_sequence(index, Some(minute - 1));
        let _ = deltas.register(index, &id(i));
        let _ = observations.register(index, &id(i));
        let bars: Vec<Bar> = (MIDNIGHT - BARS + 1..MIDNIGHT - LIVE)
            .map(|m| bar(i, m))
            .collect();
        let columns: [Vec<i64>; 5] = [
            bars.iter().map(|b| b.open).collect(),
            bars.iter().map(|b| b.high).collect(),
            bars.iter().map(|b| b.low).collect(),
            bars.iter().map(|b| b.close).collect(),
            bars.iter().map(|b| b.volume).collect(),
        ];
        let ts: Vec<u64> = bars.iter().map(|b| b.ts_event).collect();
        let view = BarsView::new(&ts, columns.each_ref().map(Vec::as_slice), None);
        let _ = universe.warm(index, &view);
    }
    let mut updated = Vec::new();
    for m in MIDNIGHT - LIVE..minute {
        let bars: Vec<(u32, Bar)> = (0..INSTRUMENTS).map(|i| (i as u32, bar(i, m))).collect();
        for &(i, b) in &bars {
            let _ = universe.observe(i, b.ts_event - MINUTE_NS, b.ts_event);
        }
        updated.clear();
        let _ = universe.close_minute(&bars, &mut updated);
    }
    let _ = deltas.refresh(&universe, &mut Deltas::default());
    let _ = observations.prime(&universe, None);
    Rows {
        universe,
        book,
        deltas,
        observations,
    }
}

/// Every instrument's event for `minute`, as the node streams it.
fn payloads(minute: u64) -> Vec<Vec<u8>> {
    (0..INSTRUMENTS)
        .map(|i| {
            let b = bar(i, minute);
            let mut row = Vec::new();
            let ohlcv = [b.open, b.high, b.low, b.close, b.volume];
            write_bar_row(&mut row, minute, b.ts_event, ohlcv, 2, 3);
            let (iid, ts, start) = (id(i), b.ts_event, b.ts_event - BARS * MINUTE_NS);
            format!(
                concat!(
                    r#"{{"version":"spine.v2","schema_id":"svc.bar_envelope","schema_version":1,"#,
                    r#""instrument_id":"{iid}","bar_type":"{iid}-1-MINUTE-LAST-EXTERNAL","resolution":"1m","#,
                    r#""channel":"EXTERNAL","bars":[{row}],"coverage":{{"version":"spine.v2","#,
                    r#""schema_id":"svc.series_coverage","schema_version":1,"instrument_id":"{iid}","#,
                    r#""channel":"EXTERNAL","retention_state":"retained","exhausted":false,"#,
                    r#""history_terminal":false,"sparse_ok":false,"bar_count":{bars},"#,
                    r#""observed":[{{"start":"{start}","end":"{ts}"}}],"gaps":[],"confirmed_empty":[],"#,
                    r#""newest_close":"{ts}","resume_from":"{ts}"}},"withheld":[],"next_cursor":null}}"#
                ),
                iid = iid,
                row = String::from_utf8_lossy(&row),
                bars = BARS,
                start = start,
                ts = ts,
            )
            .into_bytes()
        })
        .collect()
}

/// Time `Turn::take` of `payloads` for `feed` on a fresh copy of `rows` each iteration.
fn take(c: &mut Criterion, group: &str, name: &str, rows: &Rows, payloads: &[Vec<u8>], feed: &str) {
    let slices: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
    let bytes: usize = slices.iter().map(|p| p.len()).sum();
    let mut group = c.benchmark_group(group);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_millis(50));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                let mut copy = rows.clone();
                let mut buffer = Deltas::default();
                let start = Instant::now();
                let outcome = Turn {
                    universe: &mut copy.universe,
                    book: &mut copy.book,
                    deltas: Some((&mut copy.deltas, &mut buffer)),
                    observations: Some(&mut copy.observations),
                }
                .take(feed, &slices, 1);
                timed += start.elapsed();
                assert!(outcome.error.is_none());
                drop(outcome);
            }
            timed
        });
    });
    group.finish();
}

fn bench_turn(c: &mut Criterion) {
    let day = rows(MIDNIGHT - 1);
    let day_minute = payloads(MIDNIGHT - 1);
    take(
        c,
        "screener_turn",
        "day_minute_1000_instruments",
        &day,
        &day_minute,
        FEED,
    );
    take(
        c,
        "screener_turn",
        "read_only_1000_payloads",
        &day,
        &day_minute,
        "http://elsewhere",
    );
    drop(day);
    let midnight = rows(MIDNIGHT);
    take(
        c,
        "screener_turn",
        "midnight_1000_instruments",
        &midnight,
        &payloads(MIDNIGHT),
        FEED,
    );
}

criterion_group!(benches, bench_turn);
criterion_main!(benches);
