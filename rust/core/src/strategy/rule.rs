//! A rule's condition compiled against the strategy's keys, and evaluated on one bar.
//!
//! The grammar is the screen filter's ([`crate::screener`]'s `grammar`: groups, depth, the
//! literal tests, each literal placed exactly on its key's grid) plus two extensions:
//! `{key, op: LT..NE, ref}` compares two keys, and `{key, op: CROSSES_ABOVE | CROSSES_BELOW,
//! ref | value}` compares this bar with the previous one. Two keys at different scales are
//! compared exactly: the one at the smaller scale is widened (an overflow there decides the
//! order by its sign). Any test reading an ABSENT value is false (NE included).

use std::cmp::Ordering;

use crate::json::{self, Value};
use crate::screener::grammar::{column, compile_test, compile_tree, place, Condition};
use crate::screener::members::object;
use crate::screener::ScreenError;
use crate::strategy::error::StrategyError;
use crate::strategy::keys::Keys;

/// The operators of a rule test, for refusals.
const OPS: &str = "LT, LE, GT, GE, EQ, NE (with value or ref), BETWEEN (with low, high), IS_ABSENT, IS_NOT_ABSENT, CROSSES_ABOVE, CROSSES_BELOW (with value or ref)";

/// Two slots compared exactly: `a` against `b`, the one at the smaller scale times `factor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    a: usize,
    b: usize,
    factor: i128,
    widen_a: bool,
}

impl Pair {
    fn new(a: usize, b: usize, keys: &Keys) -> Self {
        let (sa, sb) = (keys.scales[a], keys.scales[b]);
        let factor = 10i128.pow(u32::from(sa.abs_diff(sb)));
        Self {
            a,
            b,
            factor,
            widen_a: sa < sb,
        }
    }

    /// The order of the two values in `row`, when both are present.
    #[inline]
    fn order(&self, row: &[Option<i128>]) -> Option<Ordering> {
        let (a, b) = (row[self.a]?, row[self.b]?);
        Some(if self.widen_a {
            widened_cmp(a, self.factor, b)
        } else {
            widened_cmp(b, self.factor, a).reverse()
        })
    }
}

/// The order of `x * factor` against `y`. An overflowing widening is past every i128, so its
/// sign decides.
#[inline]
fn widened_cmp(x: i128, factor: i128, y: i128) -> Ordering {
    match x.checked_mul(factor) {
        Some(x) => x.cmp(&y),
        None if x > 0 => Ordering::Greater,
        None => Ordering::Less,
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    fn parse(op: &str) -> Option<Self> {
        Some(match op {
            "LT" => Self::Lt,
            "LE" => Self::Le,
            "GT" => Self::Gt,
            "GE" => Self::Ge,
            "EQ" => Self::Eq,
            "NE" => Self::Ne,
            _ => return None,
        })
    }

    #[inline]
    fn holds(self, order: Ordering) -> bool {
        match self {
            Self::Lt => order.is_lt(),
            Self::Le => order.is_le(),
            Self::Gt => order.is_gt(),
            Self::Ge => order.is_ge(),
            Self::Eq => order.is_eq(),
            Self::Ne => order.is_ne(),
        }
    }
}

/// A compiled condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// Every member true.
    All(Vec<Node>),
    /// At least one member true.
    Any(Vec<Node>),
    /// Present and (`lo <= m <= hi`) != `negate`.
    Range {
        slot: usize,
        lo: i128,
        hi: i128,
        negate: bool,
    },
    /// ABSENT (`absent`) or present (`!absent`).
    Absent { slot: usize, absent: bool },
    /// Both present and their order satisfies `op`.
    Compare { pair: Pair, op: Cmp },
    /// Crossing a literal: above, `prev <= at < now` (`at` = floor of the literal on the grid);
    /// below, `now < at <= prev` (`at` = its ceiling; `None` past the grid: never).
    CrossValue {
        slot: usize,
        above: bool,
        at: Option<i128>,
    },
    /// Crossing another key: above, `a <= b` before and `a > b` now; below, `a >= b` before
    /// and `a < b` now.
    CrossRef { pair: Pair, above: bool },
}

impl Node {
    /// Whether the condition holds on `now`, with `prev` the previous bar's values (`None`:
    /// no previous bar since the start or a gap, so nothing crosses).
    pub(crate) fn holds(&self, now: &[Option<i128>], prev: Option<&[Option<i128>]>) -> bool {
        match self {
            Self::All(members) => members.iter().all(|m| m.holds(now, prev)),
            Self::Any(members) => members.iter().any(|m| m.holds(now, prev)),
            Self::Range {
                slot,
                lo,
                hi,
                negate,
            } => now[*slot].is_some_and(|m| ((*lo <= m) & (m <= *hi)) != *negate),
            Self::Absent { slot, absent } => now[*slot].is_none() == *absent,
            Self::Compare { pair, op } => pair.order(now).is_some_and(|o| op.holds(o)),
            Self::CrossValue { slot, above, at } => {
                let (Some(prev), Some(at)) = (prev, at) else {
                    return false;
                };
                let (Some(before), Some(after)) = (prev[*slot], now[*slot]) else {
                    return false;
                };
                if *above {
                    before <= *at && after > *at
                } else {
                    before >= *at && after < *at
                }
            }
            Self::CrossRef { pair, above } => {
                let Some(prev) = prev else {
                    return false;
                };
                let (Some(before), Some(after)) = (pair.order(prev), pair.order(now)) else {
                    return false;
                };
                if *above {
                    before.is_le() && after.is_gt()
                } else {
                    before.is_ge() && after.is_lt()
                }
            }
        }
    }
}

/// Compile rule `name`'s condition (JSON text) against `keys`.
///
/// # Errors
/// [`StrategyError::Rule`] naming the rule, the JSON path, what was wrong and what is allowed.
pub(crate) fn compile(name: &str, condition: &str, keys: &Keys) -> Result<Node, StrategyError> {
    let refuse = |path: String, detail: String| StrategyError::Rule {
        rule: name.to_owned(),
        path,
        detail,
    };
    let value = json::parse(condition.as_bytes()).map_err(|e| refuse(e.path(), e.to_string()))?;
    compile_value(&value, keys).map_err(|e| match e {
        ScreenError::Definition { path, detail } => refuse(path, detail),
        ScreenError::UnknownKey { path, key, allowed } => refuse(
            path,
            format!("row key {key:?} is not readable; allowed: {allowed}"),
        ),
        ScreenError::Table { detail } => refuse("$".to_owned(), detail),
    })
}

/// Compile a parsed condition; the condition itself is depth 1.
pub(crate) fn compile_value(value: &Value<'_>, keys: &Keys) -> Result<Node, ScreenError> {
    compile_tree(
        value,
        "$",
        1,
        OPS,
        (Node::All, Node::Any),
        &mut |test, path, op| leaf(test, path, op, keys),
    )
}

/// One test (`op` read).
fn leaf(value: &Value<'_>, path: &str, op: &str, keys: &Keys) -> Result<Node, ScreenError> {
    let has = |name: &str| matches!(value, Value::Object(m) if m.iter().any(|(k, _)| k == name));
    let (with_ref, with_value) = (has("ref"), has("value"));
    let crosses = matches!(op, "CROSSES_ABOVE" | "CROSSES_BELOW");
    let compares = Cmp::parse(op);
    let known =
        crosses || compares.is_some() || matches!(op, "BETWEEN" | "IS_ABSENT" | "IS_NOT_ABSENT");
    if !known {
        return Err(ScreenError::at(
            &format!("{path}.op"),
            format!("{op:?} is not an operator; allowed: {OPS}"),
        ));
    }
    if with_ref && with_value && (crosses || compares.is_some()) {
        return Err(ScreenError::at(
            path,
            format!("{op} has both \"ref\" and \"value\"; allowed: exactly one of them"),
        ));
    }
    if crosses {
        let above = op == "CROSSES_ABOVE";
        if with_ref {
            let [key, _, other] = object(value, path, ["key", "op", "ref"])?;
            let a = column(key, &format!("{path}.key"), keys)?;
            let b = column(other, &format!("{path}.ref"), keys)?;
            return Ok(Node::CrossRef {
                pair: Pair::new(a, b, keys),
                above,
            });
        }
        if !with_value {
            return Err(ScreenError::at(path, format!("{op} needs \"ref\" (a row key) or \"value\" (a decimal string); allowed: exactly one of them")));
        }
        let [key, _, literal] = object(value, path, ["key", "op", "value"])?;
        let slot = column(key, &format!("{path}.key"), keys)?;
        let (_, grid) = place(literal, &format!("{path}.value"), keys.scales[slot])?;
        // prev <= X < now is prev <= floor(X) < now; now < X <= prev is now < ceil(X) <= prev.
        let at = if above { Some(grid.floor) } else { grid.ceil() };
        return Ok(Node::CrossValue { slot, above, at });
    }
    if with_ref {
        let Some(cmp) = compares else {
            return Err(ScreenError::at(
                &format!("{path}.ref"),
                format!("\"ref\" is not allowed with {op:?}; allowed: ref with LT, LE, GT, GE, EQ, NE, CROSSES_ABOVE, CROSSES_BELOW"),
            ));
        };
        let [key, _, other] = object(value, path, ["key", "op", "ref"])?;
        let a = column(key, &format!("{path}.key"), keys)?;
        let b = column(other, &format!("{path}.ref"), keys)?;
        return Ok(Node::Compare {
            pair: Pair::new(a, b, keys),
            op: cmp,
        });
    }
    Ok(match compile_test(value, path, op, keys)? {
        Condition::Range {
            column,
            lo,
            hi,
            negate,
        } => Node::Range {
            slot: column,
            lo,
            hi,
            negate,
        },
        Condition::Absent { column, absent } => Node::Absent {
            slot: column,
            absent,
        },
        // compile_test makes tests only.
        Condition::All(_) | Condition::Any(_) => {
            return Err(ScreenError::at(path, "expected a test"))
        }
    })
}

/// The row keys a condition names (`key` and `ref` members anywhere), for finding the default
/// registry features the rules read.
pub(crate) fn named_keys<'v>(value: &'v Value<'_>, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(members) => {
            for (name, item) in members {
                match (name.as_ref(), item) {
                    ("key" | "ref", Value::Str(key)) => out.push(key),
                    _ => named_keys(item, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| named_keys(item, out)),
        _ => {}
    }
}
