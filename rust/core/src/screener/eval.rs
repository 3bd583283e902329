//! Evaluating a compiled [`Screen`] over a [`ScreenTable`]: scope, filter, sort, top `limit`.
//!
//! The filter runs a column at a time: each test is one tight loop over a whole column (every
//! row, contiguous; the scope is a mask applied after) writing a mask, and groups combine
//! their members' masks with `&=` / `|=`, so the hot loops are branch-free integer compares
//! with no allocation per row (one mask per nesting level per evaluation). The ranking selects the top `limit` before sorting them (`select_nth`), so a
//! top-50 of thousands sorts 50 rows, not thousands.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::screener::column::Values;
use crate::screener::definition::{Condition, Screen, SortKey};
use crate::screener::error::ScreenError;
use crate::screener::table::ScreenTable;

/// What an evaluation found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ranked {
    /// Table row indexes in rank order (rank = position + 1), at most `limit`.
    pub rows: Vec<usize>,
    /// Rows in the definition's scope.
    pub evaluated: usize,
    /// Rows in scope that passed the filter.
    pub matched: usize,
}

/// One mask per nesting level below the top (members of a group are evaluated into them).
type Scratch = Vec<Vec<bool>>;

/// Evaluate `condition` for every row of the table into `out` (one entry per row): contiguous
/// loops over whole columns, which the compiler keeps branch-free.
fn test(condition: &Condition, table: &ScreenTable, out: &mut [bool], scratch: &mut [Vec<bool>]) {
    match condition {
        Condition::Range {
            column,
            lo,
            hi,
            negate,
        } => {
            let column = &table.columns[*column];
            match &column.values {
                Values::Narrow(values) => {
                    // The interval clipped to i64: the same rows, in 64-bit compares.
                    let (lo, hi) = if *lo > i128::from(i64::MAX) || *hi < i128::from(i64::MIN) {
                        (1, 0)
                    } else {
                        (clip(*lo), clip(*hi))
                    };
                    range(out, values, &column.present, lo, hi, *negate);
                }
                Values::Wide(values) => range(out, values, &column.present, *lo, *hi, *negate),
            }
        }
        Condition::Absent { column, absent } => {
            let present = &table.columns[*column].present;
            for (mask, &p) in out.iter_mut().zip(present) {
                *mask = p != *absent;
            }
        }
        Condition::All(members) | Condition::Any(members) => {
            let all = matches!(condition, Condition::All(_));
            let Some((level, deeper)) = scratch.split_first_mut() else {
                return; // unreachable: compile bounds the depth and sizes the scratch to it
            };
            let mut members = members.iter();
            if let Some(first) = members.next() {
                test(first, table, out, deeper);
            }
            for member in members {
                if level.len() != out.len() {
                    level.resize(out.len(), false);
                }
                test(member, table, level, deeper);
                if all {
                    out.iter_mut().zip(level.iter()).for_each(|(o, m)| *o &= *m);
                } else {
                    out.iter_mut().zip(level.iter()).for_each(|(o, m)| *o |= *m);
                }
            }
        }
    }
}

/// `i128` clipped into `i64`.
fn clip(x: i128) -> i64 {
    i64::try_from(x).unwrap_or(if x < 0 { i64::MIN } else { i64::MAX })
}

/// `out[r] = present[r] & ((lo <= v[r] <= hi) != negate)` over a whole column.
fn range<T: Copy + PartialOrd>(
    out: &mut [bool],
    values: &[T],
    present: &[bool],
    lo: T,
    hi: T,
    negate: bool,
) {
    for ((mask, &m), &p) in out.iter_mut().zip(values).zip(present) {
        *mask = p & (((lo <= m) & (m <= hi)) != negate);
    }
}

impl Screen {
    /// Evaluate over `table` (the table this screen was compiled against, or one with the
    /// same keys): rows in scope, filtered, ranked by the sort keys (ABSENT last in either
    /// direction; ties by instrument_id, then resolution by duration), top `limit`.
    ///
    /// # Errors
    /// [`ScreenError::Table`] when `table`'s keys are not the ones compiled against.
    pub fn evaluate(&self, table: &ScreenTable) -> Result<Ranked, ScreenError> {
        if !Arc::ptr_eq(&self.keys, &table.keys) && self.keys != table.keys {
            return Err(ScreenError::table(
                "the screen was compiled against a table with other keys; compile it against this one",
            ));
        }
        let mut keep = self.scope(table);
        let evaluated = keep.iter().filter(|&&k| k).count();
        if let Some(filter) = &self.filter {
            let mut hits = vec![false; keep.len()];
            // Group levels get their mask on first use.
            let mut scratch: Scratch = vec![Vec::new(); crate::screener::definition::MAX_DEPTH];
            test(filter, table, &mut hits, &mut scratch);
            keep.iter_mut().zip(&hits).for_each(|(k, h)| *k &= *h);
        }
        let n = u32::try_from(keep.len()).unwrap_or(u32::MAX);
        let mut matched: Vec<u32> = (0..n)
            .zip(&keep)
            .filter_map(|(row, &k)| k.then_some(row))
            .collect();
        let count = matched.len();
        let order = |a: &u32, b: &u32| compare(table, &self.sort, *a as usize, *b as usize);
        if matched.len() > self.limit {
            matched.select_nth_unstable_by(self.limit - 1, order);
            matched.truncate(self.limit);
        }
        matched.sort_unstable_by(order);
        Ok(Ranked {
            rows: matched.into_iter().map(|r| r as usize).collect(),
            evaluated,
            matched: count,
        })
    }

    /// Whether each row is in scope (its resolution and instrument asked for).
    fn scope(&self, table: &ScreenTable) -> Vec<bool> {
        let by_resolution = table
            .row_resolution
            .iter()
            .map(|&r| self.resolutions[r as usize]);
        match &self.instrument_ids {
            None => by_resolution.collect(),
            Some(ids) => {
                let mut wanted = vec![false; table.instruments()];
                for id in ids {
                    if let Some(i) = table.instrument(id) {
                        wanted[i as usize] = true;
                    }
                }
                by_resolution
                    .zip(&table.row_instrument)
                    .map(|(r, &i)| r & wanted[i as usize])
                    .collect()
            }
        }
    }
}

/// Rank order of two rows: the sort keys (ABSENT last either way), then instrument_id, then
/// resolution. Total, since a row is unique per (instrument, resolution).
fn compare(table: &ScreenTable, sort: &[SortKey], a: usize, b: usize) -> Ordering {
    for key in sort {
        let column = &table.columns[key.column];
        let order = match (column.present[a], column.present[b]) {
            (true, true) => {
                let o = column.values.get(a).cmp(&column.values.get(b));
                if key.descending {
                    o.reverse()
                } else {
                    o
                }
            }
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => Ordering::Equal,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    let rank = |r: usize| table.instrument_rank[table.row_instrument[r] as usize];
    rank(a)
        .cmp(&rank(b))
        .then_with(|| table.row_resolution[a].cmp(&table.row_resolution[b]))
}
