//! Unit tests of the strategy kernel: keys, each operator on hand-made bars, crosses across
//! gaps, exact comparisons across scales, every refusal; a property test against a reference
//! reading [`FeatureState::row`].

use super::*;
use crate::bars::Bar;
use crate::features::{FeatureState, FeatureValue};

fn decl(id: &str, kind: &str, params: &[(&str, &str)]) -> FeatureDecl {
    FeatureDecl::of_kind(id, kind, params)
}

fn rules(rules: &[(&str, &str)]) -> Vec<(String, String)> {
    rules
        .iter()
        .map(|(n, c)| ((*n).to_owned(), (*c).to_owned()))
        .collect()
}

/// A kernel over bars at price scale 2, size scale 0.
fn kernel(
    features: &[FeatureDecl],
    conditions: &[(&str, &str)],
) -> Result<StrategyKernel, StrategyError> {
    StrategyKernel::new(features, &rules(conditions), 2, 0)
}

/// A kernel as [`kernel`] with no declared feature and one rule, `name`.
fn one_rule(name: &str, condition: &str) -> Result<StrategyKernel, StrategyError> {
    kernel(&[], &[(name, condition)])
}

/// The rule the cross tests share.
const CLOSE_CROSSES_ABOVE_ONE: &str =
    r#"{"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1"}"#;

fn refusal(features: &[FeatureDecl], conditions: &[(&str, &str)]) -> String {
    match StrategyKernel::new(features, &rules(conditions), 2, 0) {
        Ok(_) => "accepted".to_owned(),
        Err(e) => e.to_string(),
    }
}

/// A flat bar closing at `close` (mantissa at scale 2) with `volume`.
fn bar(i: u64, close: i64, volume: i64) -> Bar {
    Bar::new(60_000_000_000 * (i + 1), close, close, close, close, volume)
}

/// The answers to a run of closes (volume 1).
fn run(k: &mut StrategyKernel, closes: &[i64]) -> Vec<u32> {
    closes
        .iter()
        .enumerate()
        .map(|(i, &c)| k.update(&bar(i as u64, c, 1)).unwrap_or(u32::MAX))
        .collect()
}

#[test]
fn keys_are_the_bar_then_declared_then_default_features() -> Result<(), StrategyError> {
    let k = kernel(
        &[decl("fast", "ema", &[("period", "3")])],
        &[(
            "entry_long",
            r#"{"key": "rsi_14.value", "op": "GT", "value": "70"}"#,
        )],
    )?;
    assert_eq!(
        k.keys(),
        [
            "bar.open",
            "bar.high",
            "bar.low",
            "bar.close",
            "bar.volume",
            "fast.value",
            "rsi_14.value"
        ]
    );
    assert_eq!(k.rule_names().collect::<Vec<_>>(), ["entry_long"]);
    Ok(())
}

#[test]
fn literal_tests_and_values() -> Result<(), StrategyError> {
    let mut k = kernel(
        &[],
        &[
            (
                "gt",
                r#"{"key": "bar.close", "op": "GT", "value": "1.005"}"#,
            ),
            ("eq", r#"{"key": "bar.close", "op": "EQ", "value": "1.01"}"#),
            (
                "between",
                r#"{"key": "bar.volume", "op": "BETWEEN", "low": "2", "high": "3"}"#,
            ),
            ("present", r#"{"key": "bar.open", "op": "IS_NOT_ABSENT"}"#),
        ],
    )?;
    assert_eq!(k.value("bar.close").ok(), Some(None));
    assert_eq!(k.update(&bar(0, 100, 1)).ok(), Some(0b1000));
    assert_eq!(k.update(&bar(1, 101, 2)).ok(), Some(0b1111));
    assert_eq!(k.value("bar.close").ok(), Some(Some("1.01".to_owned())));
    assert_eq!(k.value("bar.volume").ok(), Some(Some("2".to_owned())));
    assert!(k.value("bar.nope").is_err());
    Ok(())
}

#[test]
fn crosses_a_value_and_a_ref_and_never_on_the_first_bar_or_after_a_gap() -> Result<(), StrategyError>
{
    let mut k = kernel(
        &[decl("s", "sma", &[("period", "2")])],
        &[
            (
                "up",
                r#"{"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1"}"#,
            ),
            (
                "down",
                r#"{"key": "bar.close", "op": "CROSSES_BELOW", "value": "1"}"#,
            ),
            (
                "over",
                r#"{"key": "bar.close", "op": "CROSSES_ABOVE", "ref": "s.value"}"#,
            ),
            (
                "under",
                r#"{"key": "bar.close", "op": "CROSSES_BELOW", "ref": "s.value"}"#,
            ),
        ],
    )?;
    // Closes 2.00, 0.50, 1.00, 1.50, 1.00: sma(2) absent, 1.25, 0.75, 1.25, 1.25.
    assert_eq!(
        run(&mut k, &[200, 50, 100, 150, 100]),
        // bar 1: 2.00 -> 0.50 crosses below 1; close vs sma absent before.
        // bar 2: 0.50 -> 1.00 reaches 1 (not above); 0.50 < 1.25 before, 1.00 > 0.75 now.
        // bar 3: 1.00 -> 1.50 crosses above 1; 1.00 > 0.75 before: no cross of the sma.
        // bar 4: 1.50 -> 1.00: reaches 1 (below needs < 1); 1.50 >= 1.25, 1.00 < 1.25.
        vec![0, 0b0010, 0b0100, 0b0001, 0b1000]
    );
    let mut k = one_rule("up", CLOSE_CROSSES_ABOVE_ONE)?;
    assert_eq!(k.update(&bar(0, 50, 1)).ok(), Some(0));
    k.mark_gap();
    assert_eq!(
        k.update(&bar(1, 150, 1)).ok(),
        Some(0),
        "no cross over a gap"
    );
    assert_eq!(k.update(&bar(2, 50, 1)).ok(), Some(0));
    assert_eq!(k.update(&bar(3, 150, 1)).ok(), Some(1));
    Ok(())
}

#[test]
fn absent_compares_false_even_ne() -> Result<(), StrategyError> {
    let mut k = kernel(
        &[decl("s", "sma", &[("period", "3")])],
        &[
            ("ne", r#"{"key": "s.value", "op": "NE", "value": "0"}"#),
            (
                "ne_ref",
                r#"{"key": "s.value", "op": "NE", "ref": "bar.close"}"#,
            ),
            ("absent", r#"{"key": "s.value", "op": "IS_ABSENT"}"#),
        ],
    )?;
    assert_eq!(run(&mut k, &[100, 100, 100]), vec![0b100, 0b100, 0b001]);
    assert_eq!(k.value("s.value").ok(), Some(Some("1.00000000".to_owned())));
    Ok(())
}

#[test]
fn key_vs_key_aligns_scales_exactly() -> Result<(), StrategyError> {
    // bar.close at scale 2 against bar.volume at scale 0, and sma at scale 8.
    let mut k = kernel(
        &[decl("s", "sma", &[("period", "1")])],
        &[
            (
                "eq",
                r#"{"key": "bar.close", "op": "EQ", "ref": "bar.volume"}"#,
            ),
            (
                "lt",
                r#"{"key": "bar.volume", "op": "LT", "ref": "bar.close"}"#,
            ),
            (
                "same",
                r#"{"key": "s.value", "op": "EQ", "ref": "bar.close"}"#,
            ),
            (
                "ge",
                r#"{"key": "s.value", "op": "GE", "ref": "bar.volume"}"#,
            ),
        ],
    )?;
    assert_eq!(k.update(&bar(0, 300, 3)).ok(), Some(0b1101));
    assert_eq!(k.update(&bar(1, 301, 3)).ok(), Some(0b1110));
    assert_eq!(k.update(&bar(2, 299, 3)).ok(), Some(0b0100));
    Ok(())
}

#[test]
fn the_widest_widening_is_exact() -> Result<(), StrategyError> {
    // Price scale 0, size scale 18: bar.close widens by 10^18 (i64::MAX * 10^18 fits i128).
    let r = rules(&[
        (
            "gt",
            r#"{"key": "bar.close", "op": "GT", "ref": "bar.volume"}"#,
        ),
        (
            "lt",
            r#"{"key": "bar.volume", "op": "LT", "ref": "bar.close"}"#,
        ),
    ]);
    let mut k = StrategyKernel::new(&[], &r, 0, 18)?;
    let big = i64::MAX;
    let b = Bar::new(1, big, big, big, big, i64::MAX);
    assert_eq!(k.update(&b).ok(), Some(0b11));
    Ok(())
}

#[test]
fn groups_nest() -> Result<(), StrategyError> {
    let mut k = one_rule(
        "r",
        r#"{"any": [{"all": [{"key": "bar.close", "op": "GT", "value": "1"}, {"key": "bar.volume", "op": "GE", "value": "5"}]}, {"key": "bar.close", "op": "LT", "value": "0.5"}]}"#,
    )?;
    assert_eq!(k.update(&bar(0, 200, 4)).ok(), Some(0));
    assert_eq!(k.update(&bar(1, 200, 5)).ok(), Some(1));
    assert_eq!(k.update(&bar(2, 40, 0)).ok(), Some(1));
    assert_eq!(k.update(&bar(3, 100, 9)).ok(), Some(0));
    Ok(())
}

#[test]
fn a_refused_bar_changes_nothing() -> Result<(), StrategyError> {
    let mut k = one_rule("up", CLOSE_CROSSES_ABOVE_ONE)?;
    assert_eq!(k.update(&bar(1, 50, 1)).ok(), Some(0));
    let refused = k.update(&bar(0, 150, 1));
    assert!(matches!(refused, Err(StrategyError::Bar(_))));
    assert_eq!(k.value("bar.close").ok(), Some(Some("0.50".to_owned())));
    assert_eq!(k.update(&bar(2, 150, 1)).ok(), Some(1));
    Ok(())
}

#[test]
fn rule_refusals_name_the_rule_path_and_what_is_allowed() -> Result<(), StrategyError> {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"key": "bar.nope", "op": "GT", "value": "1"}"#,
            "rule \"r\": $.key: row key \"bar.nope\" is not readable; allowed: bar.open",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "ref": "x.value"}"#,
            "$.ref: row key \"x.value\"",
        ),
        (
            r#"{"key": "bar.close", "op": "ABOVE", "value": "1"}"#,
            "$.op: \"ABOVE\" is not an operator; allowed: LT",
        ),
        (
            r#"{"key": "bar.close", "op": "ABOVE", "ref": "bar.open"}"#,
            "$.op: \"ABOVE\" is not an operator",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "value": 1}"#,
            "$.value: expected a string",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "value": 1.5}"#,
            "INVALID_STRATEGY: rule \"r\": $.value",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "value": "1e3"}"#,
            "is not a decimal string",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "value": "1", "extra": "x"}"#,
            "unknown member \"extra\"",
        ),
        (
            r#"{"key": "bar.close", "op": "BETWEEN", "low": "2", "high": "1"}"#,
            "BETWEEN low \"2\" is above high \"1\"",
        ),
        (
            r#"{"key": "bar.close", "op": "BETWEEN", "low": "1", "high": "2", "ref": "bar.open"}"#,
            "$.ref: \"ref\" is not allowed with \"BETWEEN\"",
        ),
        (
            r#"{"key": "bar.close", "op": "IS_ABSENT", "ref": "bar.open"}"#,
            "\"ref\" is not allowed with \"IS_ABSENT\"",
        ),
        (
            r#"{"key": "bar.close", "op": "GT", "value": "1", "ref": "bar.open"}"#,
            "has both \"ref\" and \"value\"",
        ),
        (
            r#"{"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1", "ref": "bar.open"}"#,
            "has both",
        ),
        (
            r#"{"key": "bar.close", "op": "CROSSES_BELOW"}"#,
            "CROSSES_BELOW needs \"ref\"",
        ),
        (r#"{"key": "bar.close"}"#, "missing member \"op\""),
        (r#"{"all": []}"#, "$.all: 0 conditions; allowed: 1..=32"),
        (
            r#"{"all": [{"any": [{"all": [{"any": [{"key": "bar.close", "op": "IS_ABSENT"}]}]}]}]}"#,
            "$.all[0].any[0].all[0].any[0]: nesting depth 5",
        ),
        (r#"[1]"#, "expected a condition object"),
        (
            r#"{"key": "bar.close", "op": "GT""#,
            "INVALID_STRATEGY: rule \"r\"",
        ),
    ];
    for (condition, expected) in cases {
        let message = refusal(&[], &[("r", condition)]);
        assert!(
            message.contains(expected),
            "{condition}: {message:?} lacks {expected:?}"
        );
    }
    Ok(())
}

#[test]
fn feature_and_declaration_refusals() -> Result<(), StrategyError> {
    let cases: Vec<(Vec<FeatureDecl>, &str)> = vec![
        (vec![decl("bar", "ema", &[("period", "3")])], "feature \"bar\": the id \"bar\" is reserved"),
        (
            vec![decl("a", "ema", &[("period", "3")]), decl("a", "sma", &[("period", "3")])],
            "feature \"a\": declared twice",
        ),
        (vec![decl("a", "nope", &[])], "implementation \"spine_core.features.nope\" is not a feature kernel; allowed: spine_core.features.sma"),
        (vec![decl("a", "ema", &[("period", "0")])], "feature \"a\": a: parameter \"period\" = \"0\""),
        (vec![decl("a", "ema", &[])], "parameter \"period\" = \"<missing>\""),
        (vec![decl("a", "ema", &[("period", "3"), ("bogus", "1")])], "parameter \"bogus\""),
        (vec![decl("Bad", "ema", &[("period", "3")])], "feature \"Bad\""),
    ];
    for (features, expected) in cases {
        let message = refusal(&features, &[]);
        assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    }
    let many: Vec<(String, String)> = (0..33)
        .map(|i| {
            (
                format!("r{i}"),
                r#"{"key": "bar.close", "op": "IS_ABSENT"}"#.to_owned(),
            )
        })
        .collect();
    let too_many = StrategyKernel::new(&[], &many, 2, 0)
        .err()
        .map(|e| e.to_string());
    assert!(too_many.is_some_and(|m| m.contains("33 rules; allowed: at most 32")));
    let twice = rules(&[("a", r#"{"key": "bar.close", "op": "IS_ABSENT"}"#); 2]);
    let twice = StrategyKernel::new(&[], &twice, 2, 0)
        .err()
        .map(|e| e.to_string());
    assert!(twice.is_some_and(|m| m.contains("rule \"a\" is declared twice")));
    let scale = StrategyKernel::new(&[], &[], 19, 0)
        .err()
        .map(|e| e.to_string());
    assert!(scale.is_some_and(|m| m.contains("price scale 19 is out of range; allowed: 0..=18")));
    Ok(())
}

#[test]
fn feature_kinds_list_every_kernel() -> Result<(), StrategyError> {
    let kinds = feature_kinds();
    let ema = kinds.iter().find(|k| k.kind == "ema");
    assert_eq!(
        ema.map(|k| (k.implementation, k.parameters)),
        Some(("spine_core.features.ema", &["period"][..]))
    );
    assert!(kinds
        .iter()
        .any(|k| k.kind == "macd" && k.parameters == ["fast", "signal", "slow"]));
    Ok(())
}

/// A declared feature computes exactly what a [`FeatureState`] of the same spec computes.
#[test]
fn declared_features_read_as_the_registry_computes() -> Result<(), StrategyError> {
    let mut k = kernel(
        &[decl("rsi_14", "rsi", &[("period", "14")])],
        &[(
            "hot",
            r#"{"key": "rsi_14.value", "op": "GT", "value": "50"}"#,
        )],
    )?;
    let mut state =
        FeatureState::from_registry(crate::features::default_registry(), Some(&["rsi_14"]), 2, 0)?;
    for i in 0..40u64 {
        let close = 1000 + i64::try_from((i * 37) % 23).unwrap_or(0) * 10;
        let b = bar(i, close, 5);
        let fired = k.update(&b).unwrap_or(u32::MAX);
        assert!(state.update_raw(&b).is_ok());
        let row = state.row();
        let expected = match row.get("rsi_14.value") {
            Some(FeatureValue::Decimal(d)) => {
                assert_eq!(k.value("rsi_14.value").ok(), Some(Some(d.to_string())));
                u32::from(d.raw > 50 * 10i128.pow(u32::from(d.scale)))
            }
            _ => {
                assert_eq!(k.value("rsi_14.value").ok(), Some(None));
                0
            }
        };
        assert_eq!(fired, expected, "bar {i}");
    }
    Ok(())
}

mod property_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Crossing a literal and a key, against a plain reference over the closes.
        #[test]
        fn crosses_match_a_reference(closes in proptest::collection::vec(90i64..110, 1..60), gap in 0usize..60) {
            let mut k = kernel(
                &[decl("s", "sma", &[("period", "3")])],
                &[
                    ("up", r#"{"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1.00"}"#),
                    ("down", r#"{"key": "bar.close", "op": "CROSSES_BELOW", "ref": "bar.open"}"#),
                ],
            ).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut prev: Option<i64> = None;
            for (i, &c) in closes.iter().enumerate() {
                if i == gap {
                    k.mark_gap();
                    prev = None;
                }
                // open = previous close + 0 here: flat bars, open == close, so "down" never fires.
                let fired = k.update(&bar(i as u64, c, 1)).unwrap_or(u32::MAX);
                let up = prev.is_some_and(|p| p <= 100 && c > 100);
                prop_assert_eq!(fired, u32::from(up), "bar {}", i);
                prev = Some(c);
            }
        }
    }
}
