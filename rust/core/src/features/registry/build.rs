//! Building a spec: exact string parameters parsed and checked per kernel kind, then the
//! compiled spec's kernels.

use super::*;

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
