//! Building a spec: exact string parameters checked (names, then `threshold`, then the
//! kind's own in the order it reads them), then the compiled spec with its kernel.

use std::collections::BTreeMap;

use super::{Compiled, KernelKind};
use crate::features::error::FeatureError;
use crate::features::primitives::define::Params;
use crate::features::primitives::kernel::Kernel;
use crate::features::spec::{FeatureSpec, OutputSpec, Refresh, FEATURE_VERSION};
use crate::identity::check_name;

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
    let mut check = Params {
        feature_id,
        parameters: &map,
        threshold: None,
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
    if let Some(text) = map.get("threshold") {
        check.threshold = Some(check.decimal("threshold", text, kind.threshold())?);
    }
    let template = kind.build(&check)?;
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
    spec.warmup_bars = template.warmup_bars();
    Ok(Compiled {
        keys: spec.keys(),
        config_hash: spec.config_hash(),
        kind,
        template,
        spec,
    })
}
