//! The feature registry: which kernels exist, how a spec's exact parameters are parsed and
//! checked, the default set of specs, and the enum that dispatches to a kernel without
//! dynamic dispatch (one `match` per bar, inlined).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::decimal::Fixed;
use crate::features::error::FeatureError;
use crate::features::kernels::average::ema::Ema;
use crate::features::kernels::average::sma::Sma;
use crate::features::kernels::average::vwap::Vwap;
use crate::features::kernels::momentum::macd::Macd;
use crate::features::kernels::momentum::roc::Roc;
use crate::features::kernels::momentum::rsi::Rsi;
use crate::features::kernels::momentum::trend::Trend;
use crate::features::kernels::volatility::atr::Atr;
use crate::features::kernels::volatility::bollinger::Bollinger;
use crate::features::kernels::volatility::donchian::Donchian;
use crate::features::kernels::volatility::realized_vol::RealizedVol;
use crate::features::kernels::volume::volume_zscore::VolumeZscore;
use crate::features::spec::{FeatureSpec, OutputSpec, Refresh, ValueType, FEATURE_VERSION};
use crate::features::{BarBlock, BarInput, Inputs, Kernel, Outputs};
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

mod build;
pub use build::build_spec;

pub(crate) mod dispatch;
pub use dispatch::AnyKernel;
pub(crate) use dispatch::Series;

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
mod tests;
