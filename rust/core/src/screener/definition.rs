//! A screen definition (`svc.screen_definition`) compiled against a table's registry.
//!
//! Compiling checks what the schema states (so a definition that skipped schema validation is
//! still refused, never misread) and what it cannot: every key in the registry, nesting depth
//! at most [`MAX_DEPTH`] (the filter itself counts 1), BETWEEN with `low <= high`, each sort key
//! at most once. Every comparison becomes a closed interval on the key's integer grid (see
//! [`super::literal`]), so evaluation is integer compares only.

use std::sync::Arc;

use crate::bars::Resolution;
use crate::json::{self, Value};
use crate::screener::error::ScreenError;
use crate::screener::literal::{self, Grid};
use crate::screener::members::{array, object, text};
use crate::screener::table::ScreenTable;
use crate::time::parse_timestamp;
use crate::WIRE_VERSION;

/// Deepest filter nesting; the filter's own condition is depth 1.
pub const MAX_DEPTH: usize = 4;
/// Most members of one `all` / `any` group.
pub const MAX_GROUP: usize = 32;
/// Most sort keys.
pub const MAX_SORT: usize = 4;
/// Largest `limit`.
pub const MAX_LIMIT: usize = 1000;
/// Most `instrument_ids`.
pub const MAX_INSTRUMENTS: usize = 1000;

/// A compiled condition.
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

/// One sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SortKey {
    pub(crate) column: usize,
    pub(crate) descending: bool,
}

/// A definition ready to evaluate over the table it was compiled against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    /// Resolutions in scope, by [`Resolution`] declaration index.
    pub(crate) resolutions: [bool; 7],
    /// Instruments in scope; `None`: all.
    pub(crate) instrument_ids: Option<Vec<String>>,
    pub(crate) filter: Option<Condition>,
    pub(crate) sort: Vec<SortKey>,
    /// At most this many ranked rows.
    pub limit: usize,
    /// The point in time asked for; `None`: the current rows.
    pub as_of: Option<u64>,
    /// The keys of the table compiled against (column indexes refer to them).
    pub(crate) keys: Arc<[(String, u8)]>,
}

const EMPTY: (i128, i128, bool) = (1, 0, false);
const EVERYTHING: (i128, i128, bool) = (i128::MIN, i128::MAX, false);

impl Screen {
    /// Compile a definition given as JSON text.
    ///
    /// # Errors
    /// [`ScreenError`] naming the path: the JSON refusal, or as [`Self::compile`].
    pub fn from_json(text: &[u8], table: &ScreenTable) -> Result<Self, ScreenError> {
        let value = json::parse(text).map_err(|e| ScreenError::at(&e.path(), e.to_string()))?;
        Self::compile(&value, table)
    }

    /// Compile a parsed definition against `table`'s registry.
    ///
    /// # Errors
    /// [`ScreenError::Definition`] naming the path, what was wrong and what is allowed;
    /// [`ScreenError::UnknownKey`] for a key outside the registry.
    pub fn compile(definition: &Value<'_>, table: &ScreenTable) -> Result<Self, ScreenError> {
        let [version, schema_id, schema_version, resolutions, instrument_ids, filter, sort, limit, as_of] =
            object(
                definition,
                "$",
                [
                    "version",
                    "schema_id",
                    "schema_version",
                    "resolutions",
                    "instrument_ids",
                    "filter",
                    "sort",
                    "limit",
                    "as_of",
                ],
            )?;
        if text(version, "$.version", WIRE_VERSION)? != WIRE_VERSION {
            return Err(ScreenError::at(
                "$.version",
                format!("allowed: {WIRE_VERSION:?}"),
            ));
        }
        if text(schema_id, "$.schema_id", "svc.screen_definition")? != "svc.screen_definition" {
            return Err(ScreenError::at(
                "$.schema_id",
                "allowed: \"svc.screen_definition\"",
            ));
        }
        if *schema_version != Value::Int(1) {
            return Err(ScreenError::at("$.schema_version", "allowed: 1"));
        }
        Ok(Self {
            keys: Arc::clone(&table.keys),
            resolutions: scope_resolutions(resolutions)?,
            instrument_ids: scope_instruments(instrument_ids)?,
            filter: match filter {
                Value::Null => None,
                condition => Some(compile_condition(condition, "$.filter", 1, table)?),
            },
            sort: compile_sort(sort, table)?,
            limit: match limit {
                Value::Int(n) if (1..=MAX_LIMIT as i64).contains(n) => {
                    usize::try_from(*n).unwrap_or(MAX_LIMIT)
                }
                _ => {
                    return Err(ScreenError::at(
                        "$.limit",
                        format!("allowed: an integer 1..={MAX_LIMIT}"),
                    ))
                }
            },
            as_of: match as_of {
                Value::Null => None,
                value => Some(
                    parse_timestamp(text(
                        value,
                        "$.as_of",
                        "nanoseconds as a digit string, or null",
                    )?)
                    .map_err(|e| ScreenError::at("$.as_of", e.to_string()))?,
                ),
            },
        })
    }
}

fn scope_resolutions(value: &Value<'_>) -> Result<[bool; 7], ScreenError> {
    let allowed = "1..7 distinct of 1m, 5m, 15m, 30m, 1h, 4h, 1d";
    let items = array(value, "$.resolutions", allowed)?;
    if items.is_empty() {
        return Err(ScreenError::at(
            "$.resolutions",
            format!("empty; allowed: {allowed}"),
        ));
    }
    let mut scope = [false; 7];
    for (i, item) in items.iter().enumerate() {
        let path = format!("$.resolutions[{i}]");
        let name = text(item, &path, allowed)?;
        let resolution = Resolution::parse(name).map_err(|_| {
            ScreenError::at(
                &path,
                format!("{name:?} is not a resolution; allowed: {allowed}"),
            )
        })?;
        if std::mem::replace(&mut scope[resolution as usize], true) {
            return Err(ScreenError::at(
                &path,
                format!("{name:?} appears twice; allowed: {allowed}"),
            ));
        }
    }
    Ok(scope)
}

fn scope_instruments(value: &Value<'_>) -> Result<Option<Vec<String>>, ScreenError> {
    let allowed = format!("null or 1..{MAX_INSTRUMENTS} distinct instrument ids");
    if *value == Value::Null {
        return Ok(None);
    }
    let items = array(value, "$.instrument_ids", &allowed)?;
    if items.is_empty() || items.len() > MAX_INSTRUMENTS {
        return Err(ScreenError::at(
            "$.instrument_ids",
            format!("{} ids; allowed: {allowed}", items.len()),
        ));
    }
    let mut ids = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("$.instrument_ids[{i}]");
        let id = text(item, &path, &allowed)?;
        if !seen.insert(id) {
            return Err(ScreenError::at(
                &path,
                format!("{id:?} appears twice; allowed: {allowed}"),
            ));
        }
        ids.push(id.to_owned());
    }
    Ok(Some(ids))
}

/// The column of a key, or the refusal naming it and the registry.
fn column(value: &Value<'_>, path: &str, table: &ScreenTable) -> Result<usize, ScreenError> {
    let key = text(value, path, "a row key <feature_id>.<output>")?;
    table.key_index(key).ok_or_else(|| ScreenError::UnknownKey {
        path: path.to_owned(),
        key: key.to_owned(),
        allowed: table.allowed_keys(),
    })
}

fn place<'v>(value: &'v Value<'_>, path: &str, scale: u8) -> Result<(&'v str, Grid), ScreenError> {
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

const OPS: &str =
    "LT, LE, GT, GE, EQ, NE (with value), BETWEEN (with low, high), IS_ABSENT, IS_NOT_ABSENT";

fn compile_condition(
    value: &Value<'_>,
    path: &str,
    depth: usize,
    table: &ScreenTable,
) -> Result<Condition, ScreenError> {
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
    let group = |name: &str| -> Result<Vec<Condition>, ScreenError> {
        let [items] = object(value, path, [name])?;
        let items = array(items, &format!("{path}.{name}"), "1..32 conditions")?;
        if items.is_empty() || items.len() > MAX_GROUP {
            return Err(ScreenError::at(
                &format!("{path}.{name}"),
                format!("{} conditions; allowed: 1..={MAX_GROUP}", items.len()),
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                compile_condition(item, &format!("{path}.{name}[{i}]"), depth + 1, table)
            })
            .collect()
    };
    if members.iter().any(|(k, _)| k == "all") {
        return group("all").map(Condition::All);
    }
    if members.iter().any(|(k, _)| k == "any") {
        return group("any").map(Condition::Any);
    }
    let op = members
        .iter()
        .find(|(k, _)| k == "op")
        .map(|(_, v)| text(v, &format!("{path}.op"), OPS))
        .transpose()?
        .ok_or_else(|| ScreenError::at(path, format!("missing member \"op\"; allowed: {{\"all\"}}, {{\"any\"}} or a test with op {OPS}")))?;
    match op {
        "LT" | "LE" | "GT" | "GE" | "EQ" | "NE" => {
            let [key, _, literal] = object(value, path, ["key", "op", "value"])?;
            let column = column(key, &format!("{path}.key"), table)?;
            let (_, grid) = place(literal, &format!("{path}.value"), table.keys()[column].1)?;
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
            let scale = table.keys()[column].1;
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

fn compile_sort(value: &Value<'_>, table: &ScreenTable) -> Result<Vec<SortKey>, ScreenError> {
    let allowed = format!("0..{MAX_SORT} sort keys {{\"key\", \"direction\": \"ASC\" | \"DESC\"}}, each key at most once");
    let items = array(value, "$.sort", &allowed)?;
    if items.len() > MAX_SORT {
        return Err(ScreenError::at(
            "$.sort",
            format!("{} keys; allowed: {allowed}", items.len()),
        ));
    }
    let mut keys: Vec<SortKey> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("$.sort[{i}]");
        let [key, direction] = object(item, &path, ["key", "direction"])?;
        let column = column(key, &format!("{path}.key"), table)?;
        let descending = match text(direction, &format!("{path}.direction"), "ASC or DESC")? {
            "ASC" => false,
            "DESC" => true,
            other => {
                return Err(ScreenError::at(
                    &format!("{path}.direction"),
                    format!("{other:?}; allowed: ASC, DESC"),
                ))
            }
        };
        if keys.iter().any(|k| k.column == column) {
            return Err(ScreenError::at(
                &format!("{path}.key"),
                format!(
                    "sort key {:?} is repeated; allowed: {allowed}",
                    table.keys()[column].0
                ),
            ));
        }
        keys.push(SortKey { column, descending });
    }
    Ok(keys)
}
