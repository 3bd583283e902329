//! The observation writer against a direct scan of row snapshots (`FeatureState::row`, the
//! closes taken from the bars given), its documents, priming and its refusals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use super::test_rows::snapshot;
use super::{Observation, ObservationWriter, Pattern};
use crate::bars::{Bar, Channel, Resolution, SeriesConfig, MINUTE_NS};
use crate::decimal::Fixed;
use crate::features::{default_registry, FeatureError, FeatureValue, Row, Universe, Updated};
use crate::json::{canonicalize, Value};

const M: u64 = MINUTE_NS;
const T0: u64 = 19_000 * 1_440 * M;

fn universe(instruments: u32) -> Universe {
    let mut u = Universe::new(default_registry().select::<&str>(None).unwrap());
    for _ in 0..instruments {
        u.add(SeriesConfig {
            channel: Channel::External,
            price_scale: 2,
            size_scale: 0,
            capacity: 5_000,
        })
        .unwrap();
    }
    u
}

fn writer(instruments: u32) -> ObservationWriter {
    let mut w = ObservationWriter::new();
    for i in 0..instruments {
        w.register(i, &format!("I{i}.SIM")).unwrap();
    }
    w
}

/// A bar at `minute` closing at `close` (cents), its range around it.
fn bar(minute: u64, open: i64, close: i64) -> Bar {
    let (high, low) = (open.max(close) + 7, open.min(close) - 7);
    Bar::new(T0 + minute * M, open, high, low, close, 1_000 + close % 50)
}

/// A walk: `legs` of (bars, cents per bar), zig-zagging so averages cross.
fn walk(legs: &[(u64, i64)]) -> Vec<i64> {
    let mut price = 10_000;
    let mut closes = Vec::new();
    for &(bars, step) in legs {
        for k in 0..bars {
            price += step + (k as i64 % 3) - 1;
            closes.push(price.max(100));
        }
    }
    closes
}

/// One observation as the tests compare them: row, bar, pattern, values.
type Seen = (u32, Resolution, u64, Pattern, Vec<(String, FeatureValue)>);

/// A value as a mantissa at scale 18 (the test's values fit).
fn at18(value: &FeatureValue) -> Option<i128> {
    match *value {
        FeatureValue::Decimal(d) => Some(d.raw * 10i128.pow(18 - u32::from(d.scale))),
        FeatureValue::Integer(i) => Some(i128::from(i) * 10i128.pow(18)),
        _ => None,
    }
}

/// The patterns from row `a` to row `b` by the written rules, on string keys.
fn scan(a: &Row, b: &Row, close: i128) -> Vec<(Pattern, Vec<(String, FeatureValue)>)> {
    let get = |row: &Row, key: &str| row.get(key).and_then(at18);
    let both = |key: &str| Some((get(a, key)?, get(b, key)?));
    let pick = |row: &Row, keys: &[&str]| -> Vec<(String, FeatureValue)> {
        keys.iter().map(|k| ((*k).to_owned(), row[*k])).collect()
    };
    let mut out = Vec::new();
    for (fast, slow, up, down) in [
        (
            "ema_20.value",
            "sma_20.value",
            Pattern::MaCrossUp,
            Pattern::MaCrossDown,
        ),
        (
            "macd_12_26_9.line",
            "macd_12_26_9.signal",
            Pattern::MacdSignalCrossUp,
            Pattern::MacdSignalCrossDown,
        ),
    ] {
        if let (Some((f0, f1)), Some((s0, s1))) = (both(fast), both(slow)) {
            if f0 <= s0 && f1 > s1 {
                out.push((up, pick(b, &[fast, slow])));
            }
            if f0 >= s0 && f1 < s1 {
                out.push((down, pick(b, &[fast, slow])));
            }
        }
    }
    let unit = 10i128.pow(18);
    if let Some((r0, r1)) = both("rsi_14.value") {
        let (hi, lo) = (70 * unit, 30 * unit);
        let rsi = pick(b, &["rsi_14.value"]);
        for (pattern, made) in [
            (Pattern::RsiEnterOverbought, r0 <= hi && r1 > hi),
            (Pattern::RsiLeaveOverbought, r0 > hi && r1 <= hi),
            (Pattern::RsiEnterOversold, r0 >= lo && r1 < lo),
            (Pattern::RsiLeaveOversold, r0 < lo && r1 >= lo),
        ] {
            if made {
                out.push((pattern, rsi.clone()));
            }
        }
    }
    let close = close * 10i128.pow(16);
    if let Some((h0, _)) = both("donchian_20.high") {
        if close > h0 {
            out.push((Pattern::DonchianBreakoutUp, pick(a, &["donchian_20.high"])));
        }
    }
    if let Some((l0, _)) = both("donchian_20.low") {
        if close < l0 {
            out.push((Pattern::DonchianBreakoutDown, pick(a, &["donchian_20.low"])));
        }
    }
    if let Some((p0, p1)) = both("bb_20_2.percent_b") {
        let pb = pick(b, &["bb_20_2.percent_b"]);
        if p0 <= unit && p1 > unit {
            out.push((Pattern::BollingerBreakUp, pb.clone()));
        }
        if p0 >= 0 && p1 < 0 {
            out.push((Pattern::BollingerBreakDown, pb));
        }
    }
    out
}

/// What the direct scan sees from `before` to `after`, the closes taken from `closes` (per
/// instrument, by minute close time).
fn expected(
    before: &[(Option<u64>, Row)],
    after: &[(Option<u64>, Row)],
    closes: &[BTreeMap<u64, i64>],
) -> Vec<Seen> {
    let mut out = Vec::new();
    for (k, ((t0, a), (t1, b))) in before.iter().zip(after).enumerate() {
        let (i, r) = (k / 7, Resolution::ALL[k % 7]);
        let (Some(t0), Some(t1)) = (t0, t1) else {
            continue;
        };
        if t1 <= t0 {
            continue;
        }
        let (_, &close) = closes[i].range(..=*t1).next_back().unwrap();
        for (pattern, values) in scan(a, b, i128::from(close)) {
            out.push((i as u32, r, *t1, pattern, values));
        }
    }
    out.sort_by_key(|o| (o.0, o.1, o.3));
    out
}

fn got(seen: &[Observation]) -> Vec<Seen> {
    let mut out: Vec<_> = seen
        .iter()
        .map(|o| {
            let values = o
                .values
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect();
            (
                o.row.instrument,
                o.row.resolution,
                o.ts_event,
                o.pattern,
                values,
            )
        })
        .collect();
    out.sort_by_key(|o| (o.0, o.1, o.3));
    out
}

/// Feed `closes` (one walk per instrument) minute by minute through `u`, checking the
/// writer against the scan at every close; returns everything seen.
fn run(walks: &[Vec<i64>], skip_every: u64) -> Vec<Observation> {
    let n = walks.len() as u32;
    let (mut u, mut w) = (universe(n), writer(n));
    let mut closes = vec![BTreeMap::new(); walks.len()];
    let mut before = snapshot(&u);
    let mut all = Vec::new();
    let minutes = walks.iter().map(Vec::len).min().unwrap_or(0);
    for m in 0..minutes {
        if skip_every > 0 && m as u64 % skip_every == skip_every - 1 {
            continue; // a missing minute: a gap on EXTERNAL
        }
        let bars: Vec<(u32, Bar)> = walks
            .iter()
            .enumerate()
            .map(|(i, walk)| {
                let open = if m == 0 { walk[0] } else { walk[m - 1] };
                (i as u32, bar(m as u64 + 1, open, walk[m]))
            })
            .collect();
        for (i, b) in &bars {
            closes[*i as usize].insert(b.ts_event, b.close);
        }
        let mut changed = Vec::new();
        u.close_minute(&bars, &mut changed).unwrap();
        let seen = w.detect(&u, &changed).unwrap();
        let after = snapshot(&u);
        assert_eq!(got(&seen), expected(&before, &after, &closes), "minute {m}");
        before = after;
        all.extend(seen);
    }
    all
}

#[test]
fn a_zig_zag_makes_every_pattern() {
    let legs = [
        (60, 9),
        (40, -14),
        (50, 12),
        (30, -3),
        (45, -11),
        (60, 15),
        (40, -20),
    ];
    let seen = run(&[walk(&legs), walk(&legs[1..])], 0);
    let mut patterns: Vec<Pattern> = seen.iter().map(|o| o.pattern).collect();
    patterns.sort_unstable();
    patterns.dedup();
    assert_eq!(patterns, Pattern::ALL.to_vec());
    for o in &seen {
        assert!(o.values.iter().all(|(_, v)| !v.is_absent()));
        assert!(o.values.windows(2).all(|p| p[0].0 < p[1].0));
    }
}

#[test]
fn nothing_is_seen_across_a_gap() {
    // Every 10th minute missing: no kernel the patterns read warms up between gaps.
    let legs = [(100, 12), (100, -12), (100, 12)];
    assert!(run(&[walk(&legs)], 10).is_empty());
}

#[test]
fn a_warm_then_prime_sees_no_history() {
    let closes = walk(&[(200, 9), (200, -9)]);
    let mut series = crate::bars::Series::new(SeriesConfig {
        channel: Channel::External,
        price_scale: 2,
        size_scale: 0,
        capacity: 5_000,
    })
    .unwrap();
    for (m, &c) in closes.iter().enumerate() {
        series.push(bar(m as u64 + 1, c - 3, c));
    }
    let (mut u, mut w) = (universe(1), writer(1));
    u.warm(0, &series.view()).unwrap();
    w.prime(&u, None).unwrap();
    let all: Vec<Updated> = Resolution::ALL
        .map(|resolution| Updated {
            instrument: 0,
            resolution,
        })
        .to_vec();
    assert!(w.detect(&u, &all).unwrap().is_empty());
    // The next bar compares with the warmed rows.
    let next = bar(closes.len() as u64 + 1, 9_000, 20_000);
    let mut changed = Vec::new();
    u.close_minute(&[(0, next)], &mut changed).unwrap();
    let seen = w.detect(&u, &changed).unwrap();
    assert!(seen
        .iter()
        .any(|o| o.pattern == Pattern::DonchianBreakoutUp && o.row.resolution == Resolution::M1));
}

#[test]
fn documents_are_canonical_and_identified() {
    let legs = [(60, 9), (40, -14), (50, 12)];
    let walks = [walk(&legs)];
    let (mut u, mut w) = (universe(1), writer(1));
    let mut docs = Vec::new();
    for (m, &c) in walks[0].iter().enumerate() {
        let mut changed = Vec::new();
        u.close_minute(&[(0, bar(m as u64 + 1, c - 3, c))], &mut changed)
            .unwrap();
        w.observe(&u, &changed, &mut docs).unwrap();
    }
    assert!(!docs.is_empty());
    for doc in &docs {
        assert_eq!(&canonicalize(doc).unwrap(), doc);
        let value = crate::json::parse(doc).unwrap();
        let Value::Object(members) = value else {
            unreachable!("a document is an object")
        };
        let get = |name: &str| match members.iter().find(|(k, _)| k == name) {
            Some((_, Value::Str(s))) => s.to_string(),
            other => unreachable!("{name}: {other:?}"),
        };
        let pattern = Pattern::ALL
            .into_iter()
            .find(|p| p.name() == get("pattern"))
            .unwrap();
        assert_eq!(get("direction"), pattern.direction());
        let preimage = format!(
            "{{\"instrument_id\":\"I0.SIM\",\"pattern\":\"{}\",\"resolution\":\"{}\",\"ts_event\":\"{}\"}}",
            get("pattern"),
            get("resolution"),
            get("ts_event"),
        );
        let id = crate::identity_hex("observation_id", preimage.as_bytes()).unwrap();
        assert_eq!(get("observation_id"), id);
        assert_eq!(get("schema_id"), "svc.pattern_observation");
    }
}

#[test]
fn exact_comparison_across_scales() {
    use super::patterns::compare;
    use std::cmp::Ordering::{Equal, Greater, Less};
    let f = |raw: i128, scale: u8| Fixed { raw, scale };
    assert_eq!(compare(f(70, 0), f(700_000, 4)), Equal);
    assert_eq!(compare(f(700_001, 4), f(70, 0)), Greater);
    assert_eq!(compare(f(69_999_999, 6), f(70, 0)), Less);
    // Widening past 128 bits: beyond the other on its own sign's side.
    assert_eq!(compare(f(i128::MAX / 10, 0), f(1, 18)), Greater);
    assert_eq!(compare(f(i128::MIN / 10, 0), f(1, 18)), Less);
    assert_eq!(compare(f(1, 18), f(i128::MAX / 10, 0)), Less);
    assert_eq!(compare(f(1, 18), f(i128::MIN / 10, 0)), Greater);
}

#[test]
fn refusals() {
    let u = universe(2);
    let mut w = ObservationWriter::new();
    assert!(matches!(
        w.register(0, "btc.sim"),
        Err(FeatureError::InvalidInstrumentId { .. })
    ));
    assert!(matches!(
        w.register(1, "A.SIM"),
        Err(FeatureError::InstrumentIndexGap { index: 1, next: 0 })
    ));
    w.register(0, "A.SIM").unwrap();
    let row = |instrument| Updated {
        instrument,
        resolution: Resolution::M1,
    };
    assert!(matches!(
        w.detect(&u, &[row(0)]),
        Err(FeatureError::UnregisteredInstrument { index: 1 })
    ));
    assert!(matches!(
        w.prime(&u, None),
        Err(FeatureError::UnregisteredInstrument { index: 1 })
    ));
    w.register(1, "B.SIM").unwrap();
    assert!(matches!(
        w.detect(&u, &[row(0), row(2)]),
        Err(FeatureError::UnknownInstrument { index: 2, len: 2 })
    ));
    assert!(matches!(
        w.prime(&u, Some(2)),
        Err(FeatureError::UnknownInstrument { index: 2, len: 2 })
    ));
    assert!(w.detect(&u, &[row(0), row(1)]).unwrap().is_empty());
}

mod property_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn the_writer_sees_what_a_direct_scan_sees(
            legs in proptest::collection::vec((5u64..40, -25i64..25), 4..10),
            offset in 0usize..3,
            skip_every in prop_oneof![Just(0u64), 15u64..60],
        ) {
            let other: Vec<(u64, i64)> = legs.iter().skip(offset).chain(&legs).copied().collect();
            run(&[walk(&legs), walk(&other)], skip_every);
        }
    }
}
