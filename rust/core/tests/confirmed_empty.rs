//! Minutes the venue confirmed empty (its history answered and held no candle): on EXTERNAL
//! such a minute folds as a no-trade minute, a missing minute not confirmed stays a gap.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use spine_core::bars::{
    fold, fold_many, Bar, Channel, Closed, IncrementalFold, PushOutcome, Resolution, Series,
    SeriesConfig, WithheldReason,
};

use common::{M, T0};

/// The bar closing at `minute`, its prices set by the minute.
fn bar(minute: u64) -> Bar {
    common::bar(minute, 100 + minute as i64)
}

/// An EXTERNAL series observing minutes `[0, 60)` with a candle for each minute closing at
/// 1..=60 except those in `skipped`.
fn external(skipped: &[u64]) -> Series {
    let mut s = Series::new(SeriesConfig {
        channel: Channel::External,
        price_scale: 2,
        size_scale: 3,
        capacity: 5_000,
    })
    .unwrap();
    for minute in (1..=60).filter(|m| !skipped.contains(m)) {
        assert!(matches!(s.push(bar(minute)), PushOutcome::Appended(_)));
    }
    s.observe(T0, T0 + 60 * M).unwrap();
    s
}

fn withheld(s: &Series, resolution: Resolution) -> Vec<(u64, u64, WithheldReason)> {
    let out = s.fold(resolution).unwrap();
    out.withheld
        .iter()
        .map(|w| ((w.start - T0) / M, (w.end - T0) / M, w.reason))
        .collect()
}

fn closes(s: &Series, resolution: Resolution) -> Vec<u64> {
    let out = s.fold(resolution).unwrap();
    out.bars.ts_event.iter().map(|t| (t - T0) / M).collect()
}

#[test]
fn a_confirmed_minute_folds_as_a_no_trade_minute_an_unconfirmed_one_stays_a_gap() {
    // Candles closing at 7 and 23 are missing: minutes [6, 7) and [22, 23).
    let mut s = external(&[7, 23]);
    assert_eq!(
        withheld(&s, Resolution::M5),
        vec![
            (5, 10, WithheldReason::GapInInput),
            (20, 25, WithheldReason::GapInInput)
        ]
    );
    assert_eq!(
        s.unresolved(),
        vec![(T0 + 6 * M, T0 + 7 * M), (T0 + 22 * M, T0 + 23 * M)]
    );
    assert!(s.has_unresolved());

    // The venue's history answers [5, 10) without the candle closing at 7.
    let confirmed = s.confirm_empty(T0 + 5 * M, T0 + 10 * M).unwrap();
    assert_eq!(confirmed, vec![(T0 + 6 * M, T0 + 7 * M)]); // only the minute with no bar
    assert_eq!(s.coverage().confirmed(), &[(T0 + 6 * M, T0 + 7 * M)]);
    assert_eq!(
        withheld(&s, Resolution::M5),
        vec![(20, 25, WithheldReason::GapInInput)]
    );
    assert!(closes(&s, Resolution::M5).contains(&10));
    // The bucket is computed from the four candles it has.
    let m5 = s.fold(Resolution::M5).unwrap();
    let k = m5
        .bars
        .ts_event
        .iter()
        .position(|&t| t == T0 + 10 * M)
        .unwrap();
    assert_eq!(
        (m5.bars.open[k], m5.bars.close[k], m5.bars.volume[k]),
        (106, 111, 40)
    );
    assert_eq!(s.unresolved(), vec![(T0 + 22 * M, T0 + 23 * M)]);
    assert_eq!(
        withheld(&s, Resolution::H1),
        vec![(0, 60, WithheldReason::GapInInput)]
    );

    s.confirm_empty(T0 + 22 * M, T0 + 23 * M).unwrap();
    assert!(withheld(&s, Resolution::H1).is_empty());
    assert_eq!(closes(&s, Resolution::H1), vec![60]);
    assert!(!s.has_unresolved() && s.unresolved().is_empty());
}

#[test]
fn a_whole_bucket_confirmed_empty_has_no_bar_and_no_gap_and_folding_many_agrees() {
    let mut s = external(&[11, 12, 13, 14, 15, 33]);
    s.confirm_empty(T0 + 10 * M, T0 + 15 * M).unwrap();
    assert_eq!(
        withheld(&s, Resolution::M5),
        vec![(30, 35, WithheldReason::GapInInput)]
    );
    assert!(!closes(&s, Resolution::M5).contains(&15)); // nothing traded: no bar, not withheld
    assert_eq!(closes(&s, Resolution::M15), vec![15, 30, 60]); // [30, 45) lacks 33
    let all = [
        Resolution::M5,
        Resolution::M15,
        Resolution::M30,
        Resolution::H1,
    ];
    let many = fold_many(&s.view(), s.coverage(), Channel::External, &all).unwrap();
    for (resolution, output) in all.iter().zip(many) {
        assert_eq!(
            output,
            fold(&s.view(), s.coverage(), Channel::External, *resolution).unwrap()
        );
    }
}

#[test]
fn a_candle_for_a_confirmed_minute_is_held_and_no_longer_confirmed() {
    let mut s = external(&[7, 8]);
    s.confirm_empty(T0, T0 + 60 * M).unwrap();
    assert_eq!(s.coverage().confirmed(), &[(T0 + 6 * M, T0 + 8 * M)]);
    assert!(matches!(s.push(bar(7)), PushOutcome::Inserted(_)));
    assert_eq!(s.coverage().confirmed(), &[(T0 + 7 * M, T0 + 8 * M)]);
    assert!(withheld(&s, Resolution::M5).is_empty());
    assert!(s.confirm_empty(T0, T0).is_err());
}

#[test]
fn unresolved_names_unobserved_time_inside_the_series_and_the_missing_candles() {
    let mut s = external(&[3]);
    s.observe(T0 + 70 * M, T0 + 80 * M).unwrap();
    // The outage [60, 70) and the observed minutes above the newest close with no candle,
    // touching it, are one span.
    assert_eq!(
        s.unresolved(),
        vec![(T0 + 2 * M, T0 + 3 * M), (T0 + 60 * M, T0 + 80 * M)]
    );
    // On INTERNAL a minute without a bar is a no-trade minute: only the outage is a gap.
    let mut internal = Series::new(SeriesConfig {
        channel: Channel::Internal,
        price_scale: 2,
        size_scale: 3,
        capacity: 5_000,
    })
    .unwrap();
    internal.push(bar(1));
    internal.observe(T0, T0 + 60 * M).unwrap();
    internal.observe(T0 + 70 * M, T0 + 80 * M).unwrap();
    assert_eq!(internal.unresolved(), vec![(T0 + 60 * M, T0 + 70 * M)]);
}

#[test]
fn confirming_repairs_a_closed_bucket_in_the_stream() {
    let mut s = external(&[]);
    let mut fold = IncrementalFold::new();
    let mut out = Vec::new();
    // Live: the candle closing at 62 is skipped.
    s.observe(T0 + 60 * M, T0 + 66 * M).unwrap();
    for minute in [61, 63, 64, 65, 66] {
        let b = bar(minute);
        let outcome = s.push(b);
        fold.on_push(&s, &b, &outcome, &mut out).unwrap();
    }
    let gap = out.iter().any(|c| {
        matches!(c, Closed::Withheld { resolution: Resolution::M5, withheld }
            if withheld.end == T0 + 65 * M && withheld.reason == WithheldReason::GapInInput)
    });
    assert!(gap, "{out:?}");
    out.clear();
    let confirmed = s.confirm_empty(T0 + 61 * M, T0 + 62 * M).unwrap();
    for (start, end) in confirmed {
        fold.on_confirm(&s, start, end, &mut out).unwrap();
    }
    assert_eq!(out.len(), 1, "{out:?}"); // the 5m bucket only: 15m and longer are still open
    assert!(
        matches!(out[0], Closed::Bar { resolution: Resolution::M5, bar, .. } if bar.ts_event == T0 + 65 * M)
    );
}
