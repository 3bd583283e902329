//! Unit tests of the feature registry (kept apart: the registry itself stays readable).

use super::*;

#[test]
fn defaults_all_build_with_their_warmups() {
    let registry = default_registry();
    assert_eq!(registry.features().len(), defaults().len());
    let warmups: Vec<(&str, u64)> = registry
        .features()
        .iter()
        .map(|f| (f.spec.feature_id.as_str(), f.spec.warmup_bars))
        .collect();
    assert_eq!(
        warmups,
        vec![
            ("sma_20", 20),
            ("ema_20", 20),
            ("rsi_14", 15),
            ("atr_14", 15),
            ("bb_20_2", 20),
            ("macd_12_26_9", 34),
            ("roc_10", 11),
            ("rvol_20", 21),
            ("vol_z_20", 20),
            ("vwap_20", 20),
            ("donchian_20", 20),
            ("trend_200", 200),
        ]
    );
    for kind in KernelKind::ALL {
        assert_eq!(
            KernelKind::from_implementation(kind.implementation()),
            Some(kind)
        );
    }
    assert_eq!(KernelKind::from_implementation("nope"), None);
}

#[test]
fn parameters_are_checked() {
    let bad =
        |kind, params: &[(&str, &str)]| build_spec(kind, "f", params).err().map(|e| e.to_string());
    for period in ["0", "01", "-1", "1.0", "", "100001", "x", "+5"] {
        let err = bad(KernelKind::Sma, &[("period", period)]);
        assert!(
            err.is_some_and(|e| e.starts_with("INVALID_FEATURE_PARAMETER")),
            "{period:?}"
        );
    }
    assert!(bad(KernelKind::Sma, &[]).is_some());
    assert!(bad(KernelKind::Sma, &[("period", "3"), ("k", "2")]).is_some());
    assert!(bad(KernelKind::Sma, &[("period", "3"), ("period", "4")]).is_some());
    assert!(bad(KernelKind::Bollinger, &[("period", "3"), ("k", "0")]).is_some());
    assert!(bad(KernelKind::Bollinger, &[("period", "3"), ("k", "2e0")]).is_some());
    assert!(bad(
        KernelKind::Macd,
        &[("fast", "26"), ("slow", "12"), ("signal", "9")]
    )
    .is_some());
    assert!(bad(
        KernelKind::RealizedVol,
        &[("period", "1"), ("annualization", "1")]
    )
    .is_some());
    assert!(bad(KernelKind::Trend, &[("period", "5"), ("threshold", "-0.1")]).is_some());
    assert!(bad(KernelKind::Rsi, &[("period", "5"), ("threshold", "-0")]).is_some());
    assert!(bad(KernelKind::Rsi, &[("period", "5"), ("threshold", "-5")]).is_none());
    assert!(matches!(
        build_spec(KernelKind::Sma, "Bad-Id", &[("period", "3")]),
        Err(FeatureError::InvalidFeatureId { .. })
    ));
    let ok = build_spec(
        KernelKind::Bollinger,
        "bb_5_2_5",
        &[("period", "5"), ("k", "2.5")],
    );
    assert!(ok.is_ok_and(|c| c.spec.warmup_bars == 5 && c.keys.len() == 4));
}

#[test]
fn selection_refuses_unknown_and_duplicate_ids() {
    let registry = default_registry();
    assert_eq!(
        registry.select::<&str>(None).map(|v| v.len()).ok(),
        Some(12)
    );
    let picked = registry.select(Some(&["rsi_14", "sma_20"][..]));
    assert_eq!(
        picked
            .map(|v| v
                .iter()
                .map(|f| f.spec.feature_id.clone())
                .collect::<Vec<_>>())
            .ok(),
        Some(vec!["rsi_14".to_owned(), "sma_20".to_owned()])
    );
    let unknown = registry
        .select(Some(&["rsi_99"][..]))
        .err()
        .map(|e| e.to_string());
    assert!(unknown.is_some_and(|e| e.starts_with("UNKNOWN_FEATURE: \"rsi_99\"")));
    assert!(matches!(
        registry.select(Some(&["rsi_14", "rsi_14"][..])),
        Err(FeatureError::DuplicateFeature { .. })
    ));
    let twice = build_spec(KernelKind::Sma, "a", &[("period", "2")]);
    let again = build_spec(KernelKind::Ema, "a", &[("period", "2")]);
    if let (Ok(a), Ok(b)) = (twice, again) {
        assert!(Registry::new(vec![a, b]).is_err());
    }
}

#[test]
fn config_hashes_are_distinct_and_stable() {
    let registry = default_registry();
    let hashes: std::collections::BTreeSet<&str> = registry
        .features()
        .iter()
        .map(|f| f.config_hash.as_str())
        .collect();
    assert_eq!(hashes.len(), 12);
    let rebuilt = build_spec(
        KernelKind::Rsi,
        "rsi_14",
        &[("threshold", "70"), ("period", "14")],
    );
    assert_eq!(
        rebuilt.map(|c| c.config_hash).ok().as_deref(),
        registry.get("rsi_14").map(|f| f.config_hash.as_str())
    );
}
