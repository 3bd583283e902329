//! The feature registry: which kernels exist, how a spec's exact parameters are parsed and
//! checked, the default set of specs, and the enum that dispatches to a kernel without
//! dynamic dispatch (one `match` per bar, inlined).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use super::atr::Atr;
use super::bollinger::Bollinger;
use super::donchian::Donchian;
use super::ema::Ema;
use super::error::FeatureError;
use super::macd::Macd;
use super::realized_vol::RealizedVol;
use super::roc::Roc;
use super::rsi::Rsi;
use super::sma::Sma;
use super::spec::{FeatureSpec, OutputSpec, Refresh, ValueType, FEATURE_VERSION};
use super::trend::Trend;
use super::volume_zscore::VolumeZscore;
use super::vwap::Vwap;
use super::{BarBlock, BarInput, Inputs, Kernel, Outputs};
use crate::decimal::Fixed;
use crate::identity::check_name;

/// The longest window a spec may declare. The durable series keeps 5,000 bars; a longer
/// period could never warm from it, and the bound caps the memory one spec can ask for.
pub const MAX_PERIOD: u64 = 100_000;

/// Price-level outputs (averages, bands, ranges) are published at 8 decimals: enough for
/// every venue precision in use and far inside the i128 mantissa for any i64 price. Kernels
/// compute in f64 (~16 significant digits), so for price levels above ~1e7 the last of the 8
/// places carry f64 rounding; the decimal is still the exact rounding of the computed f64.
const PRICE: u8 = 8;

/// The kernels this crate implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelKind {
    /// [`Sma`].
    Sma,
    /// [`Ema`].
    Ema,
    /// [`Rsi`] (Wilder).
    Rsi,
    /// [`Atr`] (Wilder).
    Atr,
    /// [`Bollinger`].
    Bollinger,
    /// [`Macd`].
    Macd,
    /// [`Roc`].
    Roc,
    /// [`RealizedVol`].
    RealizedVol,
    /// [`VolumeZscore`].
    VolumeZscore,
    /// [`Vwap`].
    Vwap,
    /// [`Donchian`].
    Donchian,
    /// [`Trend`].
    Trend,
}

type OutputTable = &'static [(&'static str, ValueType, u8)];

impl KernelKind {
    /// Every kernel, in registry order.
    pub const ALL: [Self; 12] = [
        Self::Sma,
        Self::Ema,
        Self::Rsi,
        Self::Atr,
        Self::Bollinger,
        Self::Macd,
        Self::Roc,
        Self::RealizedVol,
        Self::VolumeZscore,
        Self::Vwap,
        Self::Donchian,
        Self::Trend,
    ];

    /// The `implementation` string of specs computed by this kernel.
    #[must_use]
    pub const fn implementation(self) -> &'static str {
        match self {
            Self::Sma => "spine_core.features.sma",
            Self::Ema => "spine_core.features.ema",
            Self::Rsi => "spine_core.features.rsi",
            Self::Atr => "spine_core.features.atr",
            Self::Bollinger => "spine_core.features.bollinger",
            Self::Macd => "spine_core.features.macd",
            Self::Roc => "spine_core.features.roc",
            Self::RealizedVol => "spine_core.features.realized_vol",
            Self::VolumeZscore => "spine_core.features.volume_zscore",
            Self::Vwap => "spine_core.features.vwap",
            Self::Donchian => "spine_core.features.donchian",
            Self::Trend => "spine_core.features.trend",
        }
    }

    /// The kernel named by an `implementation` string.
    #[must_use]
    pub fn from_implementation(implementation: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.implementation() == implementation)
    }

    /// Declared outputs: name, value type, scale.
    const fn outputs(self) -> OutputTable {
        use ValueType::{Decimal, Integer};
        match self {
            Self::Sma | Self::Ema | Self::Atr | Self::Vwap => &[("value", Decimal, PRICE)],
            Self::Rsi | Self::Roc | Self::VolumeZscore => &[("value", Decimal, 4)],
            Self::RealizedVol => &[("value", Decimal, 8)],
            Self::Bollinger => &[
                ("mid", Decimal, PRICE),
                ("upper", Decimal, PRICE),
                ("lower", Decimal, PRICE),
                ("percent_b", Decimal, 6),
            ],
            Self::Macd => &[
                ("line", Decimal, PRICE),
                ("signal", Decimal, PRICE),
                ("histogram", Decimal, PRICE),
            ],
            Self::Donchian => &[("high", Decimal, PRICE), ("low", Decimal, PRICE)],
            Self::Trend => &[("ratio", Decimal, 6), ("sign", Integer, 0)],
        }
    }

    /// Parameter names the kernel accepts besides the optional `threshold`.
    const fn parameter_names(self) -> &'static [&'static str] {
        match self {
            Self::Bollinger => &["k", "period"],
            Self::Macd => &["fast", "signal", "slow"],
            Self::RealizedVol => &["annualization", "period"],
            _ => &["period"],
        }
    }
}

/// Parsed, checked parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Params {
    Period(u64),
    Bollinger { period: u64, k: f64 },
    Macd { fast: u64, slow: u64, signal: u64 },
    RealizedVol { period: u64, annualization: u64 },
    Trend { period: u64, threshold: Fixed },
}

/// A spec with its parameters parsed, ready to build kernels from. Shared (in an [`Arc`])
/// by every state that computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    /// The spec as published.
    pub spec: FeatureSpec,
    /// The kernel computing it.
    pub kind: KernelKind,
    /// Row keys `<feature_id>.<output_name>`, in output order.
    pub keys: Vec<String>,
    /// `config_hash` of the spec.
    pub config_hash: String,
    params: Params,
}

struct Checker<'a> {
    feature_id: &'a str,
    parameters: &'a BTreeMap<String, String>,
}

impl Checker<'_> {
    fn bad(&self, name: &str, value: &str, expected: impl Into<String>) -> FeatureError {
        FeatureError::BadParameter {
            feature_id: self.feature_id.to_owned(),
            name: name.to_owned(),
            value: value.to_owned(),
            expected: expected.into(),
        }
    }

    fn get(&self, name: &str) -> Result<&str, FeatureError> {
        self.parameters
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| self.bad(name, "<missing>", "a required parameter"))
    }

    /// An integer string `^[1-9][0-9]*$` within `min..=MAX_PERIOD`.
    fn integer(&self, name: &str, min: u64) -> Result<u64, FeatureError> {
        let text = self.get(name)?;
        let expected =
            format!("an integer string from {min} to {MAX_PERIOD}, no sign or leading zero");
        let canonical = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && !(text.len() > 1 && text.starts_with('0'));
        text.parse::<u64>()
            .ok()
            .filter(|n| canonical && (min..=MAX_PERIOD).contains(n))
            .ok_or_else(|| self.bad(name, text, expected))
    }

    /// A decimal string (pinned decision 4), optionally required to be positive or >= 0.
    fn decimal(
        &self,
        name: &str,
        text: &str,
        min: Option<(i128, bool)>,
    ) -> Result<Fixed, FeatureError> {
        let expected = match min {
            Some((_, true)) => "a positive decimal string such as \"2\" or \"2.5\"",
            Some((_, false)) => "a non-negative decimal string such as \"0\" or \"0.001\"",
            None => "a decimal string such as \"70\" or \"-0.5\"",
        };
        let value = Fixed::parse_natural(text).map_err(|_| self.bad(name, text, expected))?;
        let ok = match min {
            Some((_, true)) => value.raw > 0,
            Some((_, false)) => value.raw >= 0,
            None => true,
        };
        if ok {
            Ok(value)
        } else {
            Err(self.bad(name, text, expected))
        }
    }
}

fn to_f64(value: Fixed) -> f64 {
    value.to_string().parse::<f64>().unwrap_or(f64::NAN)
}

/// Build and check a spec for `kind` from exact string parameters.
///
/// # Errors
/// [`FeatureError::InvalidFeatureId`] for an id outside `^[a-z][a-z0-9_]{0,63}$`;
/// [`FeatureError::BadParameter`] for a missing, unknown or out-of-range parameter.
pub fn build_spec(
    kind: KernelKind,
    feature_id: &str,
    parameters: &[(&str, &str)],
) -> Result<Compiled, FeatureError> {
    if check_name(feature_id).is_err() {
        return Err(FeatureError::InvalidFeatureId {
            feature_id: feature_id.to_owned(),
        });
    }
    let mut map = BTreeMap::new();
    for &(name, value) in parameters {
        if map.insert(name.to_owned(), value.to_owned()).is_some() {
            return Err(FeatureError::BadParameter {
                feature_id: feature_id.to_owned(),
                name: name.to_owned(),
                value: value.to_owned(),
                expected: "each parameter once".into(),
            });
        }
    }
    let check = Checker {
        feature_id,
        parameters: &map,
    };
    for (name, value) in &map {
        if name != "threshold" && !kind.parameter_names().contains(&name.as_str()) {
            let allowed = kind.parameter_names().join(", ");
            return Err(check.bad(
                name,
                value,
                format!(
                    "not a parameter of {}; allowed: {allowed}, threshold",
                    kind.implementation()
                ),
            ));
        }
    }
    let threshold = match map.get("threshold") {
        Some(text) => Some(check.decimal(
            "threshold",
            text,
            if kind == KernelKind::Trend {
                Some((0, false))
            } else {
                None
            },
        )?),
        None => None,
    };
    let params = match kind {
        KernelKind::Bollinger => {
            let k = check.decimal("k", check.get("k")?, Some((0, true)))?;
            Params::Bollinger {
                period: check.integer("period", 1)?,
                k: to_f64(k),
            }
        }
        KernelKind::Macd => {
            let (fast, slow) = (check.integer("fast", 1)?, check.integer("slow", 2)?);
            if fast >= slow {
                return Err(check.bad(
                    "fast",
                    check.get("fast")?,
                    format!("less than slow ({slow})"),
                ));
            }
            Params::Macd {
                fast,
                slow,
                signal: check.integer("signal", 1)?,
            }
        }
        KernelKind::RealizedVol => Params::RealizedVol {
            period: check.integer("period", 2)?,
            annualization: check.integer("annualization", 1)?,
        },
        KernelKind::Trend => Params::Trend {
            period: check.integer("period", 1)?,
            threshold: threshold.unwrap_or(Fixed::zero(0)),
        },
        _ => Params::Period(check.integer("period", 1)?),
    };
    let outputs = kind
        .outputs()
        .iter()
        .map(|&(name, value_type, scale)| OutputSpec {
            name,
            value_type,
            scale,
            refresh: Refresh::BarClose,
        })
        .collect();
    let mut spec = FeatureSpec {
        feature_id: feature_id.to_owned(),
        feature_version: FEATURE_VERSION,
        implementation: kind.implementation(),
        input_kind: "BAR",
        parameters: map,
        warmup_bars: 0,
        outputs,
    };
    let mut compiled = Compiled {
        keys: spec.keys(),
        config_hash: String::new(),
        kind,
        params,
        spec: spec.clone(),
    };
    spec.warmup_bars = compiled.kernel().warmup_bars();
    compiled.config_hash = spec.config_hash();
    compiled.spec = spec;
    Ok(compiled)
}

impl Compiled {
    /// A fresh kernel for this spec.
    #[must_use]
    pub fn kernel(&self) -> AnyKernel {
        match (self.kind, self.params) {
            (KernelKind::Bollinger, Params::Bollinger { period, k }) => {
                AnyKernel::Bollinger(Bollinger::new(period, k))
            }
            (KernelKind::Macd, Params::Macd { fast, slow, signal }) => {
                AnyKernel::Macd(Macd::new(fast, slow, signal))
            }
            (
                KernelKind::RealizedVol,
                Params::RealizedVol {
                    period,
                    annualization,
                },
            ) => AnyKernel::RealizedVol(RealizedVol::new(period, annualization)),
            (KernelKind::Trend, Params::Trend { period, threshold }) => {
                let scale = self.spec.outputs.first().map_or(6, |o| o.scale);
                AnyKernel::Trend(Trend::new(period, threshold, scale))
            }
            (kind, params) => {
                let period = match params {
                    Params::Period(p) => p,
                    _ => 1,
                };
                match kind {
                    KernelKind::Ema => AnyKernel::Ema(Ema::new(period)),
                    KernelKind::Rsi => AnyKernel::Rsi(Rsi::new(period)),
                    KernelKind::Atr => AnyKernel::Atr(Atr::new(period)),
                    KernelKind::Roc => AnyKernel::Roc(Roc::new(period)),
                    KernelKind::VolumeZscore => AnyKernel::VolumeZscore(VolumeZscore::new(period)),
                    KernelKind::Vwap => AnyKernel::Vwap(Vwap::new(period)),
                    KernelKind::Donchian => AnyKernel::Donchian(Donchian::new(period)),
                    _ => AnyKernel::Sma(Sma::new(period)),
                }
            }
        }
    }
}

/// One kernel of any kind: static dispatch through a `match`.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub enum AnyKernel {
    Sma(Sma),
    Ema(Ema),
    Rsi(Rsi),
    Atr(Atr),
    Bollinger(Bollinger),
    Macd(Macd),
    Roc(Roc),
    RealizedVol(RealizedVol),
    VolumeZscore(VolumeZscore),
    Vwap(Vwap),
    Donchian(Donchian),
    Trend(Trend),
}

macro_rules! dispatch {
    ($self:ident, $k:ident => $body:expr) => {
        match $self {
            AnyKernel::Sma($k) => $body,
            AnyKernel::Ema($k) => $body,
            AnyKernel::Rsi($k) => $body,
            AnyKernel::Atr($k) => $body,
            AnyKernel::Bollinger($k) => $body,
            AnyKernel::Macd($k) => $body,
            AnyKernel::Roc($k) => $body,
            AnyKernel::RealizedVol($k) => $body,
            AnyKernel::VolumeZscore($k) => $body,
            AnyKernel::Vwap($k) => $body,
            AnyKernel::Donchian($k) => $body,
            AnyKernel::Trend($k) => $body,
        }
    };
}

impl Kernel for AnyKernel {
    #[inline]
    fn slots(&self) -> usize {
        dispatch!(self, k => k.slots())
    }

    #[inline]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        dispatch!(self, k => k.update(slots, bar));
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        // One match per block, then the kernel's own tight loop.
        dispatch!(self, k => k.warm_block(slots, block));
    }

    fn warm(&mut self, slots: &mut [f64], bars: &[BarInput]) {
        dispatch!(self, k => k.warm(slots, bars));
    }

    fn inputs(&self) -> Inputs {
        dispatch!(self, k => k.inputs())
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        dispatch!(self, k => k.values(slots))
    }

    fn warmup_bars(&self) -> u64 {
        dispatch!(self, k => k.warmup_bars())
    }

    fn bars_seen(&self) -> u64 {
        dispatch!(self, k => k.bars_seen())
    }

    fn reset(&mut self) {
        dispatch!(self, k => k.reset());
    }
}

/// An ordered set of compiled specs with unique ids.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    features: Vec<Arc<Compiled>>,
}

impl Registry {
    /// A registry of `features`, in the order given.
    ///
    /// # Errors
    /// [`FeatureError::DuplicateFeature`] when two share an id.
    pub fn new(features: Vec<Compiled>) -> Result<Self, FeatureError> {
        let mut seen = std::collections::BTreeSet::new();
        for f in &features {
            if !seen.insert(f.spec.feature_id.clone()) {
                return Err(FeatureError::DuplicateFeature {
                    feature_id: f.spec.feature_id.clone(),
                });
            }
        }
        Ok(Self {
            features: features.into_iter().map(Arc::new).collect(),
        })
    }

    /// Every feature, in registry order.
    #[must_use]
    pub fn features(&self) -> &[Arc<Compiled>] {
        &self.features
    }

    /// The feature with this id.
    #[must_use]
    pub fn get(&self, feature_id: &str) -> Option<&Arc<Compiled>> {
        self.features
            .iter()
            .find(|f| f.spec.feature_id == feature_id)
    }

    /// The features named by `ids` (in that order), or all of them for `None`.
    ///
    /// # Errors
    /// [`FeatureError::UnknownFeature`] or [`FeatureError::DuplicateFeature`].
    pub fn select<S: AsRef<str>>(
        &self,
        ids: Option<&[S]>,
    ) -> Result<Vec<Arc<Compiled>>, FeatureError> {
        let Some(ids) = ids else {
            return Ok(self.features.clone());
        };
        let mut out: Vec<Arc<Compiled>> = Vec::with_capacity(ids.len());
        for id in ids {
            let id = id.as_ref();
            let found = self.get(id).ok_or_else(|| FeatureError::UnknownFeature {
                feature_id: id.to_owned(),
                known: self
                    .features
                    .iter()
                    .map(|f| f.spec.feature_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            if out.iter().any(|f| f.spec.feature_id == id) {
                return Err(FeatureError::DuplicateFeature {
                    feature_id: id.to_owned(),
                });
            }
            out.push(Arc::clone(found));
        }
        Ok(out)
    }
}

/// A default spec: kernel, feature id, parameters.
type DefaultSpec = (
    KernelKind,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// The default specs.
const DEFAULTS: [DefaultSpec; 12] = [
    (KernelKind::Sma, "sma_20", &[("period", "20")]),
    (KernelKind::Ema, "ema_20", &[("period", "20")]),
    (
        KernelKind::Rsi,
        "rsi_14",
        &[("period", "14"), ("threshold", "70")],
    ),
    (KernelKind::Atr, "atr_14", &[("period", "14")]),
    (
        KernelKind::Bollinger,
        "bb_20_2",
        &[("period", "20"), ("k", "2")],
    ),
    (
        KernelKind::Macd,
        "macd_12_26_9",
        &[("fast", "12"), ("slow", "26"), ("signal", "9")],
    ),
    (KernelKind::Roc, "roc_10", &[("period", "10")]),
    (
        KernelKind::RealizedVol,
        "rvol_20",
        &[("period", "20"), ("annualization", "1")],
    ),
    (
        KernelKind::VolumeZscore,
        "vol_z_20",
        &[("period", "20"), ("threshold", "2")],
    ),
    (KernelKind::Vwap, "vwap_20", &[("period", "20")]),
    (KernelKind::Donchian, "donchian_20", &[("period", "20")]),
    (
        KernelKind::Trend,
        "trend_200",
        &[("period", "200"), ("threshold", "0")],
    ),
];

/// The default registry, built once.
#[must_use]
pub fn default_registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // The defaults are constants checked by the tests below; none is refused.
        let built = DEFAULTS
            .iter()
            .filter_map(|&(kind, id, params)| build_spec(kind, id, params).ok())
            .collect();
        Registry::new(built).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_all_build_with_their_warmups() {
        let registry = default_registry();
        assert_eq!(registry.features().len(), DEFAULTS.len());
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
        let bad = |kind, params: &[(&str, &str)]| {
            build_spec(kind, "f", params).err().map(|e| e.to_string())
        };
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
}
