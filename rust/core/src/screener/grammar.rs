//! The condition grammar of `svc.screen_definition` (`$defs.condition`), shared by screens and
//! strategy rules ([`crate::strategy`]): `all` / `any` groups of 1..=[`MAX_GROUP`] members
//! nested at most [`MAX_DEPTH`] deep ([`compile_tree`], which hands each test to a caller's
//! leaf compiler), and the screen's own tests ([`compile_test`]: `LT`..`NE` against a decimal
//! `value`, `BETWEEN`, `IS_ABSENT` / `IS_NOT_ABSENT`) over any [`KeyTable`].
//!
//! Every comparison with a literal becomes a closed interval on the key's integer grid (see
//! [`super::literal`]), so evaluation is integer compares only.

use crate::json::Value;
use crate::screener::error::ScreenError;
use crate::screener::literal::{self, Grid};
use crate::screener::members::{array, object, text};

/// Deepest filter nesting; the filter's own condition is depth 1.
pub const MAX_DEPTH: usize = 4;
/// Most members of one `all` / `any` group.
pub const MAX_GROUP: usize = 32;

/// The operators of a screen test, for refusals.
pub(crate) const OPS: &str =
    "LT, LE, GT, GE, EQ, NE (with value), BETWEEN (with low, high), IS_ABSENT, IS_NOT_ABSENT";

/// The row keys a condition may name: each at a column with a scale.
pub(crate) trait KeyTable {
    /// The column of `key`.
    fn column_of(&self, key: &str) -> Option<usize>;
    /// The scale of `column`'s values.
    fn scale_of(&self, column: usize) -> u8;
    /// The keys allowed, comma separated (for refusals).
    fn allowed(&self) -> String;
}

/// A compiled screen test or group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Condition {
    /// Every member true.
    All(Vec<Condition>),
    /// At least one member true.
    Any(Vec<Condition>),
    /// Present and (`lo <= m <= hi`) != `negate`.
    Range {
        column: usize,
        lo: i128,
        hi: i128,
        negate: bool,
    },
    /// ABSENT (`absent`) or present (`!absent`).
    Absent { column: usize, absent: bool },
}

/// An empty interval.
const EMPTY: (i128, i128, bool) = (1, 0, false);
/// Every present value.
const EVERYTHING: (i128, i128, bool) = (i128::MIN, i128::MAX, false);

/// How a compiled form makes a group of its compiled members.
pub(crate) type Group<C> = fn(Vec<C>) -> C;

/// Compile a condition tree: groups here (an `all` group made by `all`, an `any` group by
/// `any`), each test (an object with `op`) by `leaf`, called with the test, its path and its
/// `op`. `ops` lists the operators allowed (for refusals).
///
/// # Errors
/// [`ScreenError::Definition`] naming the path: too deep, not an object, a group of the wrong
/// size, a test without `op`; or what `leaf` refuses.
pub(crate) fn compile_tree<C, F>(
    value: &Value<'_>,
    path: &str,
    depth: usize,
    ops: &str,
    (all, any): (Group<C>, Group<C>),
    leaf: &mut F,
) -> Result<C, ScreenError>
where
    F: FnMut(&Value<'_>, &str, &str) -> Result<C, ScreenError>,
{
    if depth > MAX_DEPTH {
        return Err(ScreenError::at(
            path,
            format!(
                "nesting depth {depth}; allowed: at most {MAX_DEPTH}, the filter itself counting 1"
            ),
        ));
    }
    let Value::Object(members) = value else {
        return Err(ScreenError::at(path, "expected a condition object: {\"all\": [...]}, {\"any\": [...]} or {\"key\", \"op\", ...}"));
    };
    for (name, group) in [("all", all), ("any", any)] {
        if !members.iter().any(|(k, _)| k == name) {
            continue;
        }
        let [items] = object(value, path, [name])?;
        let items = array(items, &format!("{path}.{name}"), "1..32 conditions")?;
        if items.is_empty() || items.len() > MAX_GROUP {
            return Err(ScreenError::at(
                &format!("{path}.{name}"),
                format!("{} conditions; allowed: 1..={MAX_GROUP}", items.len()),
            ));
        }
        let compiled = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let path = format!("{path}.{name}[{i}]");
                compile_tree(item, &path, depth + 1, ops, (all, any), leaf)
            })
            .collect::<Result<Vec<C>, ScreenError>>()?;
        return Ok(group(compiled));
    }
    let op = members
        .iter()
        .find(|(k, _)| k == "op")
        .map(|(_, v)| text(v, &format!("{path}.op"), ops))
        .transpose()?
        .ok_or_else(|| ScreenError::at(path, format!("missing member \"op\"; allowed: {{\"all\"}}, {{\"any\"}} or a test with op {ops}")))?;
    leaf(value, path, op)
}

/// The column of a key, or the refusal naming it and the keys allowed.
pub(crate) fn column(
    value: &Value<'_>,
    path: &str,
    table: &impl KeyTable,
) -> Result<usize, ScreenError> {
    let key = text(value, path, "a row key <feature_id>.<output>")?;
    table.column_of(key).ok_or_else(|| ScreenError::UnknownKey {
        path: path.to_owned(),
        key: key.to_owned(),
        allowed: table.allowed(),
    })
}

/// A decimal literal at `path` placed on the grid of `scale`.
pub(crate) fn place<'v>(
    value: &'v Value<'_>,
    path: &str,
    scale: u8,
) -> Result<(&'v str, Grid), ScreenError> {
    let literal = text(value, path, "a decimal string")?;
    let grid = literal::place(literal, scale).map_err(|e| ScreenError::at(path, e))?;
    Ok((literal, grid))
}

/// The interval (and negation) a comparison is on the key's grid; see the module docs.
fn interval(op: &str, grid: Grid) -> (i128, i128, bool) {
    let (floor, ceil) = (grid.floor, grid.ceil());
    match op {
        "LT" => match ceil {
            None => EVERYTHING,
            Some(c) => c.checked_sub(1).map_or(EMPTY, |hi| (i128::MIN, hi, false)),
        },
        "LE" => (i128::MIN, floor, false),
        "GT" => floor
            .checked_add(1)
            .map_or(EMPTY, |lo| (lo, i128::MAX, false)),
        "GE" => ceil.map_or(EMPTY, |lo| (lo, i128::MAX, false)),
        "EQ" if grid.exact => (floor, floor, false),
        "NE" if grid.exact => (floor, floor, true),
        "EQ" => EMPTY,
        _ => EVERYTHING, // NE with a literal between two grid points: every present value
    }
}

/// Compile one screen test (`op` already read) against `table`.
///
/// # Errors
/// [`ScreenError::Definition`] naming the path; [`ScreenError::UnknownKey`].
pub(crate) fn compile_test(
    value: &Value<'_>,
    path: &str,
    op: &str,
    table: &impl KeyTable,
) -> Result<Condition, ScreenError> {
    match op {
        "LT" | "LE" | "GT" | "GE" | "EQ" | "NE" => {
            let [key, _, literal] = object(value, path, ["key", "op", "value"])?;
            let column = column(key, &format!("{path}.key"), table)?;
            let (_, grid) = place(literal, &format!("{path}.value"), table.scale_of(column))?;
            let (lo, hi, negate) = interval(op, grid);
            Ok(Condition::Range {
                column,
                lo,
                hi,
                negate,
            })
        }
        "BETWEEN" => {
            let [key, _, low, high] = object(value, path, ["key", "op", "low", "high"])?;
            let column = column(key, &format!("{path}.key"), table)?;
            let scale = table.scale_of(column);
            let (low_text, low) = place(low, &format!("{path}.low"), scale)?;
            let (high_text, high) = place(high, &format!("{path}.high"), scale)?;
            if literal::compare(low_text, high_text).is_gt() {
                return Err(ScreenError::at(path, format!("BETWEEN low {low_text:?} is above high {high_text:?}; allowed: low <= high")));
            }
            // low <= m <= high is ceil(low) <= m <= floor(high) on the key's grid.
            let (lo, hi) = low.ceil().map_or((EMPTY.0, EMPTY.1), |lo| (lo, high.floor));
            Ok(Condition::Range {
                column,
                lo,
                hi,
                negate: false,
            })
        }
        "IS_ABSENT" | "IS_NOT_ABSENT" => {
            let [key, _] = object(value, path, ["key", "op"])?;
            let column = column(key, &format!("{path}.key"), table)?;
            Ok(Condition::Absent {
                column,
                absent: op == "IS_ABSENT",
            })
        }
        other => Err(ScreenError::at(
            &format!("{path}.op"),
            format!("{other:?} is not an operator; allowed: {OPS}"),
        )),
    }
}
