//! The delta writer against a reference built from row snapshots (`FeatureState::row`,
//! formatted with `format!`), registry changes, and its refusals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use super::test_rows::snapshot;
use super::{DeltaWriter, Deltas};
use crate::bars::{Bar, Channel, Resolution, SeriesConfig, MINUTE_NS};
use crate::features::{
    default_registry, AbsentReason, FeatureError, FeatureValue, Row, Universe, Updated,
};

const M: u64 = MINUTE_NS;
const T0: u64 = 19_000 * 1_440 * M;

fn config() -> SeriesConfig {
    SeriesConfig {
        channel: Channel::External,
        price_scale: 2,
        size_scale: 3,
        capacity: 5_000,
    }
}

fn bar(minute: u64, seed: u64) -> Bar {
    let price = 10_000 + ((minute * 7_919 + seed * 13) % 97) as i64 - 48;
    let (close, volume) = (
        price + ((minute % 5) as i64 - 2),
        ((minute * 31 + seed) % 11) as i64 * 1_000,
    );
    Bar::new(
        T0 + minute * M,
        price,
        price + 25,
        price - 25,
        close,
        volume,
    )
}

fn universe(ids: Option<&[&str]>, instruments: u32) -> Universe {
    let mut u = Universe::new(default_registry().select(ids).unwrap());
    for _ in 0..instruments {
        u.add(config()).unwrap();
    }
    u
}

fn writer(instruments: u32) -> DeltaWriter {
    let mut w = DeltaWriter::new();
    for i in 0..instruments {
        w.register(i, &format!("I{i}.SIM")).unwrap();
    }
    w
}

fn value_text(v: &FeatureValue) -> String {
    match v {
        FeatureValue::Decimal(d) => {
            format!(r#"{{"kind":"DECIMAL","scale":{},"value":"{d}"}}"#, d.scale)
        }
        FeatureValue::Integer(i) => format!(r#"{{"kind":"INTEGER","value":"{i}"}}"#),
        FeatureValue::UnixNanos(n) => format!(r#"{{"kind":"UNIX_NANOS","value":"{n}"}}"#),
        FeatureValue::Absent(AbsentReason::WarmingUp {
            bars_seen,
            bars_needed,
        }) => format!(
            r#"{{"bars_needed":{bars_needed},"bars_seen":{bars_seen},"kind":"ABSENT","reason":"WARMING_UP"}}"#
        ),
        FeatureValue::Absent(reason) => {
            format!(r#"{{"kind":"ABSENT","reason":"{}"}}"#, reason.symbol())
        }
    }
}

/// The reference document from `before` to `after`, if any key or the close time changed.
fn reference(
    id: &str,
    r: Resolution,
    before: &(Option<u64>, Row),
    after: &(Option<u64>, Row),
) -> Option<String> {
    let ((was, before), (ts, after)) = (before, after);
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let ops: Vec<String> = keys
        .into_iter()
        .filter_map(|k| match (before.get(k), after.get(k)) {
            (Some(_), None) => Some(format!(r#"{{"key":"{k}","op":"RETIRE"}}"#)),
            (b, Some(a)) if b != Some(a) => Some(format!(
                r#"{{"key":"{k}","op":"UPSERT","value":{}}}"#,
                value_text(a)
            )),
            _ => None,
        })
        .collect();
    (!ops.is_empty() || was != ts).then(|| {
        format!(
            r#"{{"instrument_id":"{id}","operations":[{}],"resolution":"{}","schema_id":"svc.feature_row_delta","schema_version":1,"ts_event":"{}","version":"spine.v2"}}"#,
            ops.join(","),
            r.name(),
            ts.unwrap_or(0)
        )
    })
}

/// Every reference document from snapshot `before` to `after` of `u`, row by row.
fn references(
    u: &Universe,
    before: &[(Option<u64>, Row)],
    after: &[(Option<u64>, Row)],
) -> BTreeSet<(u32, usize, String)> {
    let mut out = BTreeSet::new();
    for i in 0..u.len() as u32 {
        for (k, r) in Resolution::ALL.into_iter().enumerate() {
            let row = i as usize * 7 + k;
            let id = format!("I{i}.SIM");
            if let Some(doc) = reference(&id, r, &before[row], &after[row]) {
                out.insert((i, k, doc));
            }
        }
    }
    out
}

fn documents(deltas: &Deltas) -> BTreeSet<(u32, usize, String)> {
    deltas
        .iter()
        .map(
            |(
                Updated {
                    instrument,
                    resolution,
                },
                bytes,
            )| {
                let text = String::from_utf8(bytes.to_vec()).unwrap();
                (instrument, resolution as usize, text)
            },
        )
        .collect()
}

fn minute(u: u32, m: u64) -> Vec<(u32, Bar)> {
    (0..u).map(|i| (i, bar(m, u64::from(i)))).collect()
}

#[test]
fn closes_match_the_snapshot_reference_and_are_canonical() {
    let (mut u, mut w, mut out) = (universe(None, 3), writer(3), Deltas::default());
    // The first refresh publishes every row whole (a row's first document upserts every key).
    w.refresh(&u, &mut out).unwrap();
    assert_eq!(
        documents(&out),
        references(&u, &vec![(None, Row::new()); 21], &snapshot(&u))
    );
    let mut before = snapshot(&u);
    for m in 1..=40 {
        w.close_minute(&mut u, &minute(3, m), &mut out).unwrap();
        let after = snapshot(&u);
        assert!(
            documents(&out) == references(&u, &before, &after),
            "minute {m}"
        );
        for (_, bytes) in out.iter() {
            assert_eq!(crate::canonicalize(bytes).unwrap(), bytes);
        }
        before = after;
    }
}

#[test]
fn many_rows_split_over_threads_match_the_reference_in_row_order() {
    let n = 150;
    let (mut u, mut w, mut out) = (universe(None, n), writer(n), Deltas::default());
    w.refresh(&u, &mut out).unwrap();
    assert_eq!(out.len(), n as usize * 7);
    let mut before = snapshot(&u);
    for m in 1..=6 {
        w.close_minute(&mut u, &minute(n, m), &mut out).unwrap();
        let after = snapshot(&u);
        assert!(
            documents(&out) == references(&u, &before, &after),
            "minute {m}"
        );
        let rows: Vec<Updated> = out.iter().map(|(row, _)| row).collect();
        assert!(rows.windows(2).all(|p| p[0].instrument <= p[1].instrument));
        before = after;
    }
    // Buckets of every resolution close at 00:00 (after a gap): over 512 rows, on threads.
    w.close_minute(&mut u, &minute(n, 1_440), &mut out).unwrap();
    assert!(documents(&out) == references(&u, &before, &snapshot(&u)));
    assert!(out.len() >= n as usize);
}

#[test]
fn an_unchanged_row_produces_no_document() {
    let (mut u, mut w, mut out) = (universe(None, 2), writer(2), Deltas::default());
    w.close_minute(&mut u, &minute(2, 1), &mut out).unwrap();
    w.refresh(&u, &mut out).unwrap();
    // The close published the 1m rows; the coarser rows were never published.
    assert!(out.iter().all(|(row, _)| row.resolution != Resolution::M1));
    w.refresh(&u, &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn a_registry_change_retires_keys_distinct_from_absent() {
    let mut full = universe(None, 1);
    let (mut w, mut out) = (writer(1), Deltas::default());
    let bars: Vec<(u32, Bar)> = (1..=30).map(|m| (0, bar(m, 0))).collect();
    for b in &bars {
        w.close_minute(&mut full, std::slice::from_ref(b), &mut out)
            .unwrap();
    }
    w.refresh(&full, &mut out).unwrap();
    let mut narrow = universe(Some(&["rsi_14", "sma_20"]), 1);
    for b in &bars {
        narrow
            .close_minute(std::slice::from_ref(b), &mut Vec::new())
            .unwrap();
    }
    w.refresh(&narrow, &mut out).unwrap();
    assert_eq!(out.len(), 7);
    for (_, bytes) in out.iter() {
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(!text.contains("UPSERT") && text.contains(r#""op":"RETIRE""#));
        assert!(!text.contains("rsi_14.value") && !text.contains("sma_20.value"));
    }
    // Back to the full selection: the retired keys come back as upserts, nothing retires.
    w.refresh(&full, &mut out).unwrap();
    assert!(out
        .iter()
        .all(|(_, b)| !std::str::from_utf8(b).unwrap().contains("RETIRE")));
}

#[test]
fn refusals() {
    let mut w = DeltaWriter::new();
    let long = format!("{}.SIM", "A".repeat(125));
    for bad in ["", "BTC", "BTC.sim", ".SIM", "BT C.SIM", "BTC.1SIM", &long] {
        assert!(
            matches!(
                w.register(0, bad),
                Err(FeatureError::InvalidInstrumentId { .. })
            ),
            "{bad}"
        );
    }
    assert_eq!(
        w.register(1, "A.SIM"),
        Err(FeatureError::InstrumentIndexGap { index: 1, next: 0 })
    );
    assert!(w.register(u32::MAX, "A.SIM").is_err());
    let (mut u, mut out) = (universe(None, 2), Deltas::default());
    w.register(0, "A\"B.SIM").unwrap();
    let refused = w.close_minute(&mut u, &minute(2, 1), &mut out);
    assert_eq!(
        refused,
        Err(FeatureError::UnregisteredInstrument { index: 1 })
    );
    assert!(u.series(0).unwrap().is_empty(), "nothing was closed");
    assert!(w.advance(&mut u, T0 + M, &mut out).is_err());
    assert!(w.refresh(&u, &mut out).is_err());
    w.register(1, "B.SIM").unwrap();
    let unknown = w.close_minute(&mut u, &[(5, bar(1, 0))], &mut out);
    assert!(matches!(
        unknown,
        Err(FeatureError::UnknownInstrument { .. })
    ));
    assert!(out.is_empty());
}

mod property_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn deltas_are_the_snapshot_differences(
            steps in proptest::collection::vec((1u64..4, any::<u8>(), any::<bool>()), 1..60),
        ) {
            let (mut u, mut w, mut out) = (universe(None, 3), writer(3), Deltas::default());
            let narrow = ["ema_20", "rsi_14", "atr_14"];
            w.refresh(&u, &mut out).unwrap();
            let mut before = snapshot(&u);
            let mut m = 0;
            for (skip, mask, watermark) in steps {
                m += skip;
                let bars: Vec<(u32, Bar)> = (0..3)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| (i, bar(m, u64::from(i))))
                    .collect();
                if watermark {
                    w.advance(&mut u, T0 + m * M, &mut out).unwrap();
                } else {
                    w.close_minute(&mut u, &bars, &mut out).unwrap();
                }
                let after = snapshot(&u);
                prop_assert!(documents(&out) == references(&u, &before, &after));
                before = after;
                if mask & 0x80 != 0 {
                    // A registry change: the same bars in a universe of another selection.
                    let ids = if u.features().len() == 3 { None } else { Some(&narrow[..]) };
                    let mut other = universe(ids, 3);
                    for i in 0..3 {
                        let s = u.series(i).unwrap();
                        other.warm(i, &s.view()).unwrap();
                    }
                    u = other;
                    w.refresh(&u, &mut out).unwrap();
                    let after = snapshot(&u);
                    prop_assert!(documents(&out) == references(&u, &before, &after));
                    before = after;
                }
            }
        }
    }
}
