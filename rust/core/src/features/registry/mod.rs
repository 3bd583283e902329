//! The feature registry: the one table of kernels (`kinds.rs`) with what each declares
//! (`primitives/define.rs`), spec building ([`build_spec`]), and the [`Registry`] of compiled specs with
//! the default one.

use std::sync::{Arc, OnceLock};

use crate::features::error::FeatureError;
use crate::features::primitives::define::DefaultSpec;
use crate::features::spec::FeatureSpec;

/// A spec with its parameters parsed, ready to build kernels from. Shared (in an [`Arc`])
/// by every state that computes it.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The spec as published.
    pub spec: FeatureSpec,
    /// The kernel computing it.
    pub kind: KernelKind,
    /// Row keys `<feature_id>.<output_name>`, in output order.
    pub keys: Vec<String>,
    /// `config_hash` of the spec.
    pub config_hash: String,
    /// A fresh kernel of the spec.
    template: AnyKernel,
}

impl PartialEq for Compiled {
    /// The kernel is a function of the spec's kind and parameters.
    fn eq(&self, other: &Self) -> bool {
        (&self.spec, self.kind, &self.keys, &self.config_hash)
            == (&other.spec, other.kind, &other.keys, &other.config_hash)
    }
}

impl Compiled {
    /// A fresh kernel for this spec.
    #[must_use]
    pub fn kernel(&self) -> AnyKernel {
        self.template
    }
}

mod build;
pub(crate) mod kinds;
mod views;

pub use crate::features::primitives::define::MAX_PERIOD;
pub use build::build_spec;
pub use kinds::{AnyKernel, KernelKind};

impl KernelKind {
    /// The kernel named by an `implementation` string.
    #[must_use]
    pub fn from_implementation(implementation: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.implementation() == implementation)
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

/// The default specs: each kind's, in registry order.
pub(crate) fn defaults() -> Vec<(KernelKind, DefaultSpec)> {
    KernelKind::ALL
        .into_iter()
        .flat_map(|kind| kind.defaults().iter().map(move |&spec| (kind, spec)))
        .collect()
}

/// The default registry, built once.
#[must_use]
pub fn default_registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // The defaults are constants checked by the tests below; none is refused.
        let built = defaults()
            .into_iter()
            .filter_map(|(kind, (id, params))| build_spec(kind, id, params).ok())
            .collect();
        Registry::new(built).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests;
