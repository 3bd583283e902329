//! Refusals of the strategy kernel: a feature or rule it cannot build (`INVALID_STRATEGY`, each
//! naming the feature and parameter, or the rule and JSON path, and what is allowed), or a bar
//! the features refuse.

use crate::features::FeatureError;

/// A refused strategy declaration or bar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategyError {
    /// A rule's condition breaks the grammar or names a key that is not readable.
    #[error("INVALID_STRATEGY: rule {rule:?}: {path}: {detail}")]
    Rule {
        /// The rule's name.
        rule: String,
        /// JSON path inside the condition, e.g. `$.all[1].ref`.
        path: String,
        /// What was wrong and what is allowed.
        detail: String,
    },
    /// A declared feature the registry cannot build.
    #[error("INVALID_STRATEGY: feature {feature_id:?}: {detail}")]
    Feature {
        /// The feature's id.
        feature_id: String,
        /// What was wrong (the parameter, its value) and what is allowed.
        detail: String,
    },
    /// Anything else the declaration gets wrong (scales, the number of rules, a key read).
    #[error("INVALID_STRATEGY: {detail}")]
    Declaration {
        /// What was wrong and what is allowed.
        detail: String,
    },
    /// A bar the features refuse (out of order, inconsistent).
    #[error(transparent)]
    Bar(#[from] FeatureError),
}

impl StrategyError {
    /// The wire symbol.
    #[must_use]
    pub fn symbol(&self) -> &'static str {
        match self {
            Self::Bar(_) => "INVALID_FEATURE_INPUT",
            _ => "INVALID_STRATEGY",
        }
    }

    pub(crate) fn declaration(detail: impl Into<String>) -> Self {
        Self::Declaration {
            detail: detail.into(),
        }
    }

    /// A feature refusal: the registry's message without its symbol.
    pub(crate) fn feature(feature_id: &str, error: &FeatureError) -> Self {
        let message = error.to_string();
        let detail = message
            .split_once(": ")
            .map_or(message.as_str(), |(_, rest)| rest);
        Self::Feature {
            feature_id: feature_id.to_owned(),
            detail: detail.to_owned(),
        }
    }
}
