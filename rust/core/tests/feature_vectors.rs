//! Kernels outside the default registry against the plain-Python reference: the vectors in
//! `tests/data/feature_vectors.json` (from `tests/reference/make_feature_vectors.py`), row by
//! row through a `FeatureState`, alone and beside the default features (where its window may
//! be a view of another kernel's ring, or theirs of its).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::borrow::Cow;
use std::sync::Arc;

use spine_core::bars::Bar;
use spine_core::features::registry::Compiled;
use spine_core::features::{build_spec, default_registry, FeatureState, FeatureValue, KernelKind};
use spine_core::json::parse;
use spine_core::Value;

fn members<'v>(value: &'v Value<'_>) -> &'v [(Cow<'v, str>, Value<'v>)] {
    match value {
        Value::Object(members) => members,
        _ => &[],
    }
}

fn member<'v>(value: &'v Value<'_>, name: &str) -> &'v Value<'v> {
    &members(value)
        .iter()
        .find(|(k, _)| k == name)
        .expect(name)
        .1
}

fn items<'v>(value: &'v Value<'_>) -> &'v [Value<'v>] {
    match value {
        Value::Array(items) => items,
        _ => &[],
    }
}

fn int(value: &Value<'_>) -> i64 {
    match value {
        Value::Int(i) => *i,
        _ => i64::MIN,
    }
}

/// A string, or `None` for anything else (`null` in the vectors).
fn text<'v>(value: &'v Value<'_>) -> Option<&'v str> {
    match value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// Every row of `features` over `bars`.
fn rows(
    features: Vec<Arc<Compiled>>,
    bars: &[Bar],
    scales: (i64, i64),
) -> Vec<Vec<(String, FeatureValue)>> {
    let mut state = FeatureState::new(features, scales.0, scales.1).unwrap();
    bars.iter()
        .map(|bar| {
            state.update_raw(bar).unwrap();
            state.row().into_iter().collect()
        })
        .collect()
}

#[test]
fn kernels_match_the_reference_vectors() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/feature_vectors.json"
    );
    let text_of_file = std::fs::read(path).unwrap();
    let document = parse(&text_of_file).unwrap();
    let cases = items(member(&document, "cases"));
    assert!(!cases.is_empty());
    for (c, case) in cases.iter().enumerate() {
        let implementation = text(member(case, "implementation")).unwrap();
        let kind = KernelKind::from_implementation(implementation).unwrap();
        let parameters: Vec<(&str, &str)> = members(member(case, "parameters"))
            .iter()
            .map(|(k, v)| (k.as_ref(), text(v).unwrap()))
            .collect();
        let compiled = Arc::new(build_spec(kind, "f", &parameters).unwrap());
        let bars: Vec<Bar> = items(member(case, "bars"))
            .iter()
            .map(|bar| {
                let f: Vec<i64> = items(bar).iter().map(int).collect();
                Bar {
                    ts_event: u64::try_from(f[0]).unwrap(),
                    open: f[1],
                    high: f[2],
                    low: f[3],
                    close: f[4],
                    volume: f[5],
                }
            })
            .collect();
        let scales = (
            int(member(case, "price_scale")),
            int(member(case, "size_scale")),
        );
        let alone = rows(vec![Arc::clone(&compiled)], &bars, scales);
        let defaults = default_registry().features().to_vec();
        let mut beside = defaults.clone();
        beside.push(Arc::clone(&compiled));
        let together = rows(beside, &bars, scales);
        let only_defaults = rows(defaults, &bars, scales);
        let mut compared = 0;
        for (name, expected) in members(member(case, "outputs")) {
            let key = format!("f.{name}");
            for (i, want) in items(expected).iter().enumerate() {
                let got = &alone[i].iter().find(|(k, _)| *k == key).unwrap().1;
                match (text(want), got) {
                    (Some(want), FeatureValue::Decimal(value)) => {
                        assert_eq!(value.to_string(), want, "case {c} {key} bar {i}");
                        compared += 1;
                    }
                    (want, got) => assert!(
                        want.is_none() && matches!(got, FeatureValue::Absent(_)),
                        "case {c} {key} bar {i}: {want:?} against {got:?}"
                    ),
                }
            }
        }
        assert!(compared > 300, "case {c}: {compared} values compared");
        for (i, row) in together.iter().enumerate() {
            let (mine, theirs): (Vec<_>, Vec<_>) =
                row.iter().cloned().partition(|(k, _)| k.starts_with("f."));
            assert_eq!(mine, alone[i], "case {c} bar {i}");
            assert_eq!(theirs, only_defaults[i], "case {c} bar {i}");
        }
    }
}
