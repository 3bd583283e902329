//! A screen definition (`svc.screen_definition`) compiled against a table's registry.
//!
//! Compiling checks what the schema states (so a definition that skipped schema validation is
//! still refused, never misread) and what it cannot: every key in the registry, nesting depth
//! at most [`MAX_DEPTH`] (the filter itself counts 1), BETWEEN with `low <= high`, each sort key
//! at most once. Every comparison becomes a closed interval on the key's integer grid (see
//! [`super::literal`]), so evaluation is integer compares only.

use std::sync::Arc;

use crate::bars::Resolution;
use crate::head::SCREEN_DEFINITION;
use crate::json::{self, Value};
use crate::screener::error::ScreenError;
pub(crate) use crate::screener::grammar::Condition;
use crate::screener::grammar::{column, compile_test, compile_tree, KeyTable, OPS};
pub use crate::screener::grammar::{MAX_DEPTH, MAX_GROUP};
use crate::screener::members::{array, object, text};
use crate::screener::table::ScreenTable;
use crate::time::parse_timestamp;

/// Most sort keys.
pub const MAX_SORT: usize = 4;
/// Largest `limit`.
pub const MAX_LIMIT: usize = 1000;
/// Most `instrument_ids`.
pub const MAX_INSTRUMENTS: usize = 1000;

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
        if let Some((path, wrong)) = SCREEN_DEFINITION.mismatch(version, schema_id, schema_version)
        {
            return Err(ScreenError::at(path, wrong));
        }
        Ok(Self {
            keys: Arc::clone(&table.keys),
            resolutions: scope_resolutions(resolutions)?,
            instrument_ids: scope_instruments(instrument_ids)?,
            filter: match filter {
                Value::Null => None,
                condition => Some(compile_tree(
                    condition,
                    "$.filter",
                    1,
                    OPS,
                    (Condition::All, Condition::Any),
                    &mut |test, path, op| compile_test(test, path, op, table),
                )?),
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

impl KeyTable for ScreenTable {
    fn column_of(&self, key: &str) -> Option<usize> {
        self.key_index(key)
    }

    fn scale_of(&self, column: usize) -> u8 {
        self.keys().get(column).map_or(0, |(_, scale)| *scale)
    }

    fn allowed(&self) -> String {
        self.allowed_keys()
    }
}
