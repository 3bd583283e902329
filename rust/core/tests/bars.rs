//! Series and fold behaviour through the public API, on small hand-checked cases.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use spine_core::bars::{
    fold, Bar, Channel, Closed, Coverage, IncrementalFold, PushOutcome, Resolution, Series,
    SeriesConfig, WithheldReason,
};

use common::{bar, DAY, M, T0};

fn series(channel: Channel, capacity: usize) -> Series {
    Series::new(SeriesConfig {
        channel,
        price_scale: 2,
        size_scale: 3,
        capacity,
    })
    .unwrap()
}

#[test]
fn arrival_rule_first_close_wins_and_late_bars_fill_empty_minutes() {
    let mut s = series(Channel::External, 10);
    assert_eq!(s.push(bar(1, 100)), PushOutcome::Appended(1));
    assert_eq!(s.push(bar(3, 102)), PushOutcome::Appended(2));
    assert_eq!(s.push(bar(3, 999)), PushOutcome::Duplicate);
    assert_eq!(s.push(bar(2, 101)), PushOutcome::Inserted(3));
    assert_eq!(s.view().ts_event, &[T0 + M, T0 + 2 * M, T0 + 3 * M]);
    assert_eq!(s.view().close, &[101, 102, 103]);
    assert_eq!(s.view().sequence.unwrap(), &[1, 3, 2]);
    let c = s.counters();
    assert_eq!((c.accepted, c.duplicates, c.out_of_order), (3, 1, 1));
    assert!(matches!(
        s.push(Bar {
            high: 0,
            ..bar(9, 100)
        }),
        PushOutcome::Rejected(_)
    ));
    assert_eq!(s.counters().rejected, 1);
}

#[test]
fn eviction_keeps_the_newest_and_forgets_coverage_before_them() {
    let mut s = series(Channel::Internal, 3);
    for minute in 1..=5 {
        s.push(bar(minute, 100));
    }
    assert_eq!(s.len(), 3);
    assert_eq!(s.view().ts_event[0], T0 + 3 * M);
    assert_eq!(s.counters().evicted, 2);
    assert_eq!(s.coverage().spans(), &[(T0 + 2 * M, T0 + 5 * M)]);
    assert_eq!(s.push(bar(1, 1)), PushOutcome::TooOld);
}

#[test]
fn resume_hint_names_the_first_unobserved_instant_above_the_newest_close() {
    let mut s = series(Channel::External, 100);
    s.push(bar(1, 100));
    s.observe(T0 + M, T0 + 10 * M).unwrap();
    let hint = s.resume_hint();
    assert_eq!(hint.newest_ts_event, Some(T0 + M));
    assert_eq!(hint.resume_from, Some(T0 + 10 * M));
}

#[test]
fn external_missing_candle_withholds_its_bucket_internal_quiet_minute_does_not() {
    let minutes: Vec<u64> = (1..=10).filter(|m| *m != 7).collect();
    for channel in [Channel::External, Channel::Internal] {
        let mut s = series(channel, 100);
        s.observe(T0, T0 + 10 * M).unwrap();
        for &m in &minutes {
            s.push(bar(m, 100 + m as i64));
        }
        let out = s.fold(Resolution::M5).unwrap();
        assert_eq!(out.bars.ts_event[0], T0 + 5 * M);
        if channel == Channel::External {
            assert_eq!(out.bars.ts_event.len(), 1);
            assert_eq!(out.withheld[0].reason, WithheldReason::GapInInput);
            assert_eq!(
                (out.withheld[0].start, out.withheld[0].end),
                (T0 + 5 * M, T0 + 10 * M)
            );
        } else {
            assert_eq!(out.bars.ts_event.len(), 2);
            assert_eq!(out.bars.volume[1], 40);
            assert!(out.withheld.is_empty());
        }
    }
}

#[test]
fn outage_is_unobserved_and_the_open_bucket_is_not_closed() {
    let mut s = series(Channel::Internal, 100);
    for m in (1..=5).chain(21..=27) {
        s.push(bar(m, 100));
    }
    let out = s.fold(Resolution::M5).unwrap();
    assert_eq!(out.bars.ts_event, vec![T0 + 5 * M, T0 + 25 * M]);
    let reasons: Vec<_> = out
        .withheld
        .iter()
        .map(|w| (w.start, w.end, w.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (T0 + 5 * M, T0 + 20 * M, WithheldReason::Unobserved),
            (T0 + 25 * M, T0 + 30 * M, WithheldReason::NotClosed)
        ]
    );
}

#[test]
fn day_bucket_ends_at_midnight_utc() {
    let coverage = Coverage::from_spans([(T0, T0 + DAY + M)]).unwrap();
    let ts: Vec<u64> = (1..=1_441).map(|m| T0 + m * M).collect();
    let price: Vec<i64> = (0..1_441).collect();
    let volume = vec![1; 1_441];
    let view =
        spine_core::bars::BarsView::new(&ts, [&price, &price, &price, &price, &volume], None);
    let out = fold(&view, &coverage, Channel::External, Resolution::D1).unwrap();
    assert_eq!(out.bars.ts_event, vec![T0 + DAY]);
    assert_eq!(
        (out.bars.open[0], out.bars.close[0], out.bars.volume[0]),
        (0, 1_439, 1_440)
    );
    assert_eq!(out.withheld[0].reason, WithheldReason::NotClosed);
}

#[test]
fn incremental_fold_emits_what_the_whole_fold_serves() {
    let mut s = series(Channel::External, 5_000);
    let mut inc = IncrementalFold::new();
    let mut closed = Vec::new();
    for m in 1..=600 {
        let b = bar(m, 100 + (m % 13) as i64);
        let outcome = s.push(b);
        inc.on_push(&s, &b, &outcome, &mut closed).unwrap();
    }
    for resolution in Resolution::DERIVED {
        let whole = s.fold(resolution).unwrap();
        let streamed: Vec<u64> = closed
            .iter()
            .filter_map(|c| match c {
                Closed::Bar {
                    resolution: r, bar, ..
                } if *r == resolution => Some(bar.ts_event),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, whole.bars.ts_event, "{}", resolution.name());
    }
}

#[test]
fn jumps_name_each_pair_of_held_closes_more_than_a_minute_apart() {
    let mut s = series(Channel::External, 100);
    assert!(s.jumps().is_empty());
    for minute in [1, 2, 5, 6, 9] {
        s.push(bar(minute, 100));
    }
    assert_eq!(
        s.jumps(),
        vec![(T0 + 2 * M, T0 + 5 * M), (T0 + 6 * M, T0 + 9 * M)]
    );
    s.push(bar(7, 100)); // a late bar splits the second jump
    assert_eq!(
        s.jumps(),
        vec![(T0 + 2 * M, T0 + 5 * M), (T0 + 7 * M, T0 + 9 * M)]
    );
}
