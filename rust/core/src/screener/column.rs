//! One row key's column: exact mantissas at the key's scale and an ABSENT flag per row.

/// A column's mantissas: 64-bit while every value fits (the filter's loops then vectorise),
/// widened to 128-bit for good the first time one does not.
#[derive(Debug, Clone)]
pub(crate) enum Values {
    /// Every value fits `i64`.
    Narrow(Vec<i64>),
    /// Some value needed `i128`.
    Wide(Vec<i128>),
}

impl Values {
    /// The mantissa of `row`.
    pub(crate) fn get(&self, row: usize) -> i128 {
        match self {
            Self::Narrow(v) => i128::from(v[row]),
            Self::Wide(v) => v[row],
        }
    }

    pub(crate) fn set(&mut self, row: usize, value: i128) {
        match self {
            Self::Narrow(v) => match i64::try_from(value) {
                Ok(narrow) => v[row] = narrow,
                Err(_) => {
                    let mut wide: Vec<i128> = v.iter().map(|&x| i128::from(x)).collect();
                    wide[row] = value;
                    *self = Self::Wide(wide);
                }
            },
            Self::Wide(v) => v[row] = value,
        }
    }

    pub(crate) fn push_zero(&mut self) {
        match self {
            Self::Narrow(v) => v.push(0),
            Self::Wide(v) => v.push(0),
        }
    }

    pub(crate) fn swap_remove(&mut self, row: usize) {
        match self {
            Self::Narrow(v) => {
                v.swap_remove(row);
            }
            Self::Wide(v) => {
                v.swap_remove(row);
            }
        }
    }
}

/// One registered key's column.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    /// Mantissas at `scale` (0 where ABSENT).
    pub(crate) values: Values,
    /// Whether each row's value is present (not ABSENT).
    pub(crate) present: Vec<bool>,
}
