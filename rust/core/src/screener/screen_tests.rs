//! Unit tests of the screener, and property tests against a row-at-a-time reference.

use super::*;
use crate::bars::Resolution;
use crate::features::{AbsentReason, FeatureValue};
use crate::Fixed;

fn table() -> ScreenTable {
    let mut t = ScreenTable::new(&[
        ("rsi_14.value", 4),
        ("trend_200.sign", 0),
        ("vol_z_20.value", 2),
    ])
    .unwrap_or_default();
    let rows: [(&str, Resolution, [Cell; 3]); 6] = [
        ("B.X", Resolution::H1, [Some(500_000), Some(1), Some(150)]),
        ("A.X", Resolution::H1, [Some(300_000), Some(-1), None]),
        ("A.X", Resolution::M5, [Some(700_000), Some(1), Some(150)]),
        ("C.X", Resolution::M5, [None, Some(0), Some(-20)]),
        ("B.X", Resolution::M5, [Some(300_001), Some(1), Some(150)]),
        ("A.X", Resolution::D1, [Some(450_000), None, Some(99)]),
    ];
    for (id, resolution, cells) in rows {
        assert!(t.upsert(id, resolution, &cells).is_ok());
    }
    t
}

fn definition(filter: &str, sort: &str, limit: u32) -> String {
    format!(
        r#"{{"version":"spine.v2","schema_id":"svc.screen_definition","schema_version":1,
        "resolutions":["1m","5m","15m","30m","1h","4h","1d"],"instrument_ids":null,
        "filter":{filter},"sort":{sort},"limit":{limit},"as_of":null}}"#
    )
}

fn run(
    t: &ScreenTable,
    filter: &str,
    sort: &str,
    limit: u32,
) -> Result<(Vec<String>, usize, usize), ScreenError> {
    let screen = Screen::from_json(definition(filter, sort, limit).as_bytes(), t)?;
    let ranked = screen.evaluate(t)?;
    let names = ranked
        .rows
        .iter()
        .filter_map(|&r| t.row_id(r))
        .map(|(id, res)| format!("{id}/{}", res.name()))
        .collect();
    Ok((names, ranked.evaluated, ranked.matched))
}

fn refused(t: &ScreenTable, filter: &str, sort: &str) -> String {
    run(t, filter, sort, 10)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn no_filter_no_sort_orders_by_instrument_then_resolution_duration() {
    let (rows, evaluated, matched) = run(&table(), "null", "[]", 10).unwrap_or_default();
    assert_eq!(
        rows,
        ["A.X/5m", "A.X/1h", "A.X/1d", "B.X/5m", "B.X/1h", "C.X/5m"]
    );
    assert_eq!((evaluated, matched), (6, 6));
}

#[test]
fn filter_sort_absent_last_and_limit() {
    let t = table();
    let filter = r#"{"all":[{"key":"trend_200.sign","op":"NE","value":"0"},{"key":"rsi_14.value","op":"BETWEEN","low":"30","high":"60"}]}"#;
    let sort =
        r#"[{"key":"vol_z_20.value","direction":"DESC"},{"key":"rsi_14.value","direction":"ASC"}]"#;
    // trend ABSENT (A.X/1d) fails NE; C.X has sign 0.
    let (rows, evaluated, matched) = run(&t, filter, sort, 10).unwrap_or_default();
    assert_eq!(rows, ["B.X/5m", "B.X/1h", "A.X/1h"]);
    assert_eq!((evaluated, matched), (6, 3));
    let (rows, _, matched) = run(&t, filter, sort, 1).unwrap_or_default();
    assert_eq!((rows, matched), (vec!["B.X/5m".to_owned()], 3));
    let asc = r#"[{"key":"vol_z_20.value","direction":"ASC"}]"#;
    let (rows, ..) = run(&t, "null", asc, 10).unwrap_or_default();
    assert_eq!(
        rows,
        ["C.X/5m", "A.X/1d", "A.X/5m", "B.X/5m", "B.X/1h", "A.X/1h"]
    );
}

#[test]
fn literals_finer_than_the_scale_compare_exactly() {
    let t = table();
    let count = |op: &str, value: &str| {
        let f = format!(r#"{{"key":"rsi_14.value","op":"{op}","value":"{value}"}}"#);
        run(&t, &f, "[]", 10).map(|r| r.2).unwrap_or(usize::MAX)
    };
    // 30.0001 is present (B.X/5m); 30.00005 lies between two grid points.
    assert_eq!(count("GT", "30.00005"), 4);
    assert_eq!(count("GE", "30.00005"), 4);
    assert_eq!(count("LT", "30.00005"), 1);
    assert_eq!(count("LE", "30.00005"), 1);
    assert_eq!(count("EQ", "30.00005"), 0);
    assert_eq!(count("NE", "30.00005"), 5); // ABSENT fails NE too
    assert_eq!(count("EQ", "30.000100000000000000000000001"), 0);
    assert_eq!(count("EQ", "30.000100000000000000000000000"), 1);
    assert_eq!(count("LT", "-0.00000000000000000000001"), 0);
    assert_eq!(count("GT", "-0.00000000000000000000001"), 5);
}

#[test]
fn absent_tests_and_nesting() {
    let t = table();
    let f = r#"{"any":[{"key":"vol_z_20.value","op":"IS_ABSENT"},{"all":[{"any":[{"key":"rsi_14.value","op":"IS_ABSENT"}]}]}]}"#;
    let (rows, ..) = run(&t, f, "[]", 10).unwrap_or_default();
    assert_eq!(rows, ["A.X/1h", "C.X/5m"]);
    let f = r#"{"key":"trend_200.sign","op":"IS_NOT_ABSENT"}"#;
    assert_eq!(run(&t, f, "[]", 10).map(|r| r.2), Ok(5));
}

#[test]
fn scope_by_resolution_and_instrument() {
    let t = table();
    let text = definition("null", "[]", 10)
        .replace(
            r#"["1m","5m","15m","30m","1h","4h","1d"]"#,
            r#"["5m","1d"]"#,
        )
        .replace(
            r#""instrument_ids":null"#,
            r#""instrument_ids":["A.X","Z.X"]"#,
        );
    let screen = Screen::from_json(text.as_bytes(), &t);
    let ranked = screen.and_then(|s| s.evaluate(&t)).unwrap_or_default();
    assert_eq!(
        (ranked.evaluated, ranked.matched, ranked.rows.len()),
        (2, 2, 2)
    );
}

#[test]
fn refusals_name_what_and_what_is_allowed() {
    let t = table();
    let e = refused(&t, r#"{"key":"nope.value","op":"IS_ABSENT"}"#, "[]");
    assert!(e.starts_with("INVALID_SCREEN: $.filter.key: row key \"nope.value\" is not in the registry; allowed: rsi_14.value, trend_200.sign, vol_z_20.value"), "{e}");
    let e = refused(
        &t,
        r#"{"key":"rsi_14.value","op":"BETWEEN","low":"70","high":"30"}"#,
        "[]",
    );
    assert!(e.contains("allowed: low <= high"), "{e}");
    let deep = r#"{"all":[{"any":[{"all":[{"any":[{"key":"rsi_14.value","op":"IS_ABSENT"}]}]}]}]}"#;
    let e = refused(&t, deep, "[]");
    assert!(
        e.contains("$.filter.all[0].any[0].all[0].any[0]: nesting depth 5"),
        "{e}"
    );
    let sort =
        r#"[{"key":"rsi_14.value","direction":"ASC"},{"key":"rsi_14.value","direction":"DESC"}]"#;
    assert!(
        refused(&t, "null", sort).contains("$.sort[1].key: sort key \"rsi_14.value\" is repeated")
    );
    assert!(refused(
        &t,
        r#"{"key":"rsi_14.value","op":"GT","value":"1e5"}"#,
        "[]"
    )
    .contains("$.filter.value"));
    assert!(refused(
        &t,
        r#"{"key":"rsi_14.value","op":"GT","value":"-0.0"}"#,
        "[]"
    )
    .contains("negative zero"));
    assert!(refused(
        &t,
        r#"{"key":"rsi_14.value","op":"LIKE","value":"1"}"#,
        "[]"
    )
    .contains("not an operator"));
    assert!(refused(&t, r#"{"all":[]}"#, "[]").contains("allowed: 1..=32"));
    assert!(run(&t, "null", "[]", 0).is_err());
    assert!(run(&t, "null", "[]", 1001).is_err());
    assert!(Screen::from_json(b"{}", &t).is_err());
    assert!(Screen::from_json(b"[1.5]", &t).is_err());
}

#[test]
fn upsert_replaces_and_remove_moves_the_last_row() {
    let mut t = table();
    assert_eq!(
        t.upsert("A.X", Resolution::H1, &[Some(1), Some(1), Some(1)]),
        Ok(1)
    );
    assert_eq!(t.len(), 6);
    assert!(t.remove("B.X", Resolution::H1));
    assert!(!t.remove("B.X", Resolution::H1));
    assert_eq!(t.len(), 5);
    assert_eq!(t.row_id(0), Some(("A.X", Resolution::D1)));
    let (rows, ..) = run(&t, "null", "[]", 10).unwrap_or_default();
    assert_eq!(rows, ["A.X/5m", "A.X/1h", "A.X/1d", "B.X/5m", "C.X/5m"]);
    assert!(t.upsert("A.X", Resolution::H1, &[None]).is_err());
}

#[test]
fn cells_from_feature_values_are_exact() {
    let t = table();
    let d = |raw, scale| FeatureValue::Decimal(Fixed { raw, scale });
    assert_eq!(t.cell(0, d(12, 2)), Ok(Some(1200)));
    assert!(t.cell(0, d(12, 5)).is_err());
    assert_eq!(t.cell(1, FeatureValue::Integer(-1)), Ok(Some(-1)));
    assert_eq!(t.cell(2, FeatureValue::UnixNanos(7)), Ok(Some(700)));
    assert_eq!(
        t.cell(2, FeatureValue::Absent(AbsentReason::GapInInput)),
        Ok(None)
    );
    assert_eq!(t.parse_cell(0, "54.12"), Ok(Some(541_200)));
    assert!(t.parse_cell(0, "54.123456").is_err());
}

#[test]
fn a_column_widens_past_i64_and_stays_exact() {
    let mut t = ScreenTable::new(&[("a.x", 18)]).unwrap_or_default();
    let big = 10i128.pow(20) + 1; // 100 at scale 18, beyond i64
    for (id, cell) in [
        ("A.X", Some(5)),
        ("B.X", Some(big)),
        ("C.X", None),
        ("D.X", Some(-big)),
    ] {
        assert!(t.upsert(id, Resolution::M1, &[cell]).is_ok());
    }
    assert!(matches!(t.columns[0].values, column::Values::Wide(_)));
    let gt = r#"{"key":"a.x","op":"GT","value":"100"}"#;
    let desc = r#"[{"key":"a.x","direction":"DESC"}]"#;
    let (rows, _, matched) = run(&t, gt, desc, 10).unwrap_or_default();
    assert_eq!((rows, matched), (vec!["B.X/1m".to_owned()], 1));
    let (rows, ..) = run(&t, "null", desc, 10).unwrap_or_default();
    assert_eq!(rows, ["B.X/1m", "A.X/1m", "D.X/1m", "C.X/1m"]);
}

#[test]
fn a_screen_evaluates_only_over_the_keys_it_was_compiled_against() {
    let t = table();
    let screen = Screen::from_json(definition("null", "[]", 5).as_bytes(), &t);
    let other = ScreenTable::new(&[("rsi_14.value", 4)]).unwrap_or_default();
    let same = ScreenTable::new(t.keys()).unwrap_or_default();
    assert!(screen.as_ref().is_ok_and(|s| s.evaluate(&other).is_err()));
    assert!(screen.as_ref().is_ok_and(|s| s.evaluate(&same).is_ok()));
}

#[test]
fn table_declarations_are_checked() {
    assert!(ScreenTable::new(&[("Bad", 2)]).is_err());
    assert!(ScreenTable::new(&[("a.b", 19)]).is_err());
    assert!(ScreenTable::new(&[("a.b", 2), ("a.b", 3)]).is_err());
}

#[test]
fn rows_straight_from_a_feature_state() {
    use crate::bars::Bar;
    use crate::features::{default_registry, FeatureState};
    let mut t = ScreenTable::from_registry(default_registry()).unwrap_or_default();
    assert_eq!(t.keys().len(), 19);
    let state = FeatureState::from_registry(default_registry(), None::<&[&str]>, 2, 0);
    let Ok(mut state) = state else { return };
    for k in 0..30u64 {
        let p = i64::try_from(10_000 + k * 7 % 13).unwrap_or(0);
        let bar = Bar {
            ts_event: (k + 1) * 60_000_000_000,
            open: p,
            high: p + 5,
            low: p - 5,
            close: p,
            volume: 10,
        };
        assert!(state.update_raw(&bar).is_ok());
    }
    assert_eq!(t.upsert_state("A.X", Resolution::M1, &state), Ok(0));
    let sma = t.key_index("sma_20.value").unwrap_or(0);
    let mut expected = None;
    state.for_each_value(|key, value| {
        if key == "sma_20.value" {
            expected = Some(value);
        }
    });
    let cell = expected.map(|v| t.cell(sma, v));
    assert!(matches!(cell, Some(Ok(Some(_)))));
    assert_eq!(
        t.columns[sma].values.get(0),
        cell.and_then(Result::ok).flatten().unwrap_or(-1)
    );
    let narrow = ScreenTable::new(&[("sma_20.value", 8)]);
    assert!(narrow
        .and_then(|mut n| n.upsert_state("A.X", Resolution::M1, &state))
        .is_err());
}

mod property_tests {
    use std::cmp::Ordering;

    use proptest::prelude::*;

    use super::super::*;
    use crate::bars::Resolution;

    const KEYS: [(&str, u8); 3] = [("a.x", 0), ("b.x", 2), ("c.x", 1)];

    /// A leaf: key, op (0..6 compare, 6 BETWEEN, 7 IS_ABSENT, 8 IS_NOT_ABSENT), two literals.
    type Leaf = (usize, u8, i64, i64, u8);

    fn literal(v: i64, digits: u8) -> String {
        // v / 10^digits as a decimal string.
        let s = v.unsigned_abs().to_string();
        let d = usize::from(digits);
        let padded = format!("{s:0>width$}", width = d + 1);
        let (i, f) = padded.split_at(padded.len() - d);
        let body = if d == 0 {
            i.to_owned()
        } else {
            format!("{i}.{f}")
        };
        if v < 0 {
            format!("-{body}")
        } else {
            body
        }
    }

    /// Exact value of a literal as (numerator, 10^digits).
    fn holds(cell: Cell, scale: u8, op: u8, a: (i64, u8), b: (i64, u8)) -> bool {
        // m / 10^scale vs v / 10^digits: cross-multiply at 10^(scale + digits) in i128.
        let cmp = |m: i128, (v, d): (i64, u8)| {
            (m * 10i128.pow(u32::from(d))).cmp(&(i128::from(v) * 10i128.pow(u32::from(scale))))
        };
        match (op, cell) {
            (7, c) => c.is_none(),
            (8, c) => c.is_some(),
            (_, None) => false,
            (0, Some(m)) => cmp(m, a) == Ordering::Less,
            (1, Some(m)) => cmp(m, a) != Ordering::Greater,
            (2, Some(m)) => cmp(m, a) == Ordering::Greater,
            (3, Some(m)) => cmp(m, a) != Ordering::Less,
            (4, Some(m)) => cmp(m, a) == Ordering::Equal,
            (5, Some(m)) => cmp(m, a) != Ordering::Equal,
            (_, Some(m)) => cmp(m, a) != Ordering::Less && cmp(m, b) != Ordering::Greater,
        }
    }

    proptest! {
        #[test]
        fn matches_a_row_at_a_time_reference(
            rows in prop::collection::vec((0u8..6, 0usize..7, prop::collection::vec(prop::option::weighted(0.8, prop_oneof![9 => -30i128..30, 1 => (-3i128..3).prop_map(|k| k * 10i128.pow(25) + k)]), 3)), 0..40),
            leaves in prop::collection::vec((0usize..3, 0u8..9, -40i64..40, -40i64..40, 0u8..4), 1..4),
            any in any::<bool>(),
            sort in prop::collection::vec((0usize..3, any::<bool>()), 0..3),
            limit in 1usize..12,
        ) {
            let mut t = ScreenTable::new(&KEYS).unwrap_or_default();
            for (instrument, resolution, cells) in &rows {
                let id = format!("I{instrument}.X");
                prop_assert!(t.upsert(&id, Resolution::ALL[*resolution], cells).is_ok());
            }
            let leaves: Vec<Leaf> = leaves.into_iter().map(|(k, op, a, b, d)| if op == 6 && (a > b) { (k, op, b, a, d) } else { (k, op, a, b, d) }).collect();
            let ops = ["LT", "LE", "GT", "GE", "EQ", "NE"];
            let conditions: Vec<String> = leaves.iter().map(|&(k, op, a, b, d)| match op {
                0..=5 => format!(r#"{{"key":"{}","op":"{}","value":"{}"}}"#, KEYS[k].0, ops[usize::from(op)], literal(a, d)),
                6 => format!(r#"{{"key":"{}","op":"BETWEEN","low":"{}","high":"{}"}}"#, KEYS[k].0, literal(a, d), literal(b, d)),
                7 => format!(r#"{{"key":"{}","op":"IS_ABSENT"}}"#, KEYS[k].0),
                _ => format!(r#"{{"key":"{}","op":"IS_NOT_ABSENT"}}"#, KEYS[k].0),
            }).collect();
            let mut seen = Vec::new();
            let sort: Vec<(usize, bool)> = sort.into_iter().filter(|(k, _)| { let new = !seen.contains(k); seen.push(*k); new }).collect();
            let sort_json: Vec<String> = sort.iter().map(|(k, d)| format!(r#"{{"key":"{}","direction":"{}"}}"#, KEYS[*k].0, if *d { "DESC" } else { "ASC" })).collect();
            let filter = format!(r#"{{"{}":[{}]}}"#, if any { "any" } else { "all" }, conditions.join(","));
            let text = super::definition(&filter, &format!("[{}]", sort_json.join(",")), u32::try_from(limit).unwrap_or(1));
            let screen = Screen::from_json(text.as_bytes(), &t);
            prop_assert!(screen.is_ok(), "{:?}", screen);
            let ranked = screen.and_then(|s| s.evaluate(&t)).unwrap_or_default();

            // The reference: every row, one at a time, then a full stable sort.
            let mut held: Vec<(String, Resolution, Vec<Cell>)> = Vec::new();
            for (instrument, resolution, cells) in &rows {
                let id = format!("I{instrument}.X");
                let res = Resolution::ALL[*resolution];
                match held.iter_mut().find(|(i, r, _)| *i == id && *r == res) {
                    Some(row) => row.2.clone_from(cells),
                    None => held.push((id, res, cells.clone())),
                }
            }
            let pass = |cells: &[Cell]| {
                let tests = leaves.iter().map(|&(k, op, a, b, d)| holds(cells[k], KEYS[k].1, op, (a, d), (b, d)));
                if any { tests.into_iter().any(|x| x) } else { tests.into_iter().all(|x| x) }
            };
            let mut matched: Vec<&(String, Resolution, Vec<Cell>)> = held.iter().filter(|r| pass(&r.2)).collect();
            matched.sort_by(|x, y| {
                for &(k, desc) in &sort {
                    let o = match (x.2[k], y.2[k]) {
                        (Some(p), Some(q)) => if desc { q.cmp(&p) } else { p.cmp(&q) },
                        (Some(_), None) => Ordering::Less,
                        (None, Some(_)) => Ordering::Greater,
                        (None, None) => Ordering::Equal,
                    };
                    if o != Ordering::Equal { return o; }
                }
                x.0.cmp(&y.0).then(x.1.cmp(&y.1))
            });
            let expected: Vec<(String, Resolution)> = matched.iter().take(limit).map(|r| (r.0.clone(), r.1)).collect();
            let got: Vec<(String, Resolution)> = ranked.rows.iter().filter_map(|&r| t.row_id(r)).map(|(i, r)| (i.to_owned(), r)).collect();
            prop_assert_eq!(got, expected);
            prop_assert_eq!(ranked.matched, matched.len());
            prop_assert_eq!(ranked.evaluated, held.len());
        }
    }
}
