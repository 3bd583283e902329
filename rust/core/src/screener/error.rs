//! Refusals of the screener: a definition it cannot evaluate (`INVALID_SCREEN`) or a table
//! input it cannot hold (`INVALID_SCREEN_TABLE`). Each names where (a JSON path or a row key),
//! what was wrong, and what is allowed.

/// A refused screen definition or screen-table input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScreenError {
    /// The definition breaks the grammar or a rule the schema cannot state.
    #[error("INVALID_SCREEN: {path}: {detail}")]
    Definition {
        /// JSON path of the offending member, e.g. `$.filter.all[1].key`.
        path: String,
        /// What was wrong and what is allowed.
        detail: String,
    },
    /// A row key the table's registry does not hold.
    #[error("INVALID_SCREEN: {path}: row key {key:?} is not in the registry; allowed: {allowed}")]
    UnknownKey {
        /// JSON path of the key.
        path: String,
        /// The refused key.
        key: String,
        /// The registered keys, comma separated, in key order.
        allowed: String,
    },
    /// A table declaration or a row the table cannot hold.
    #[error("INVALID_SCREEN_TABLE: {detail}")]
    Table {
        /// What was wrong and what is allowed.
        detail: String,
    },
}

impl ScreenError {
    /// A definition refusal at `path`.
    pub(crate) fn at(path: &str, detail: impl Into<String>) -> Self {
        Self::Definition {
            path: path.to_owned(),
            detail: detail.into(),
        }
    }

    /// A table refusal.
    pub(crate) fn table(detail: impl Into<String>) -> Self {
        Self::Table {
            detail: detail.into(),
        }
    }

    /// The wire symbol.
    #[must_use]
    pub const fn symbol(&self) -> &'static str {
        match self {
            Self::Definition { .. } | Self::UnknownKey { .. } => "INVALID_SCREEN",
            Self::Table { .. } => "INVALID_SCREEN_TABLE",
        }
    }
}
