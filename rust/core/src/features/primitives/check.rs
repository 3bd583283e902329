//! The quick check of bars ([`QuickCheck`]): it vouches for the usual batch in a few
//! vectorized instructions per bar, and leaves any other batch to the precise scan of
//! [`crate::features::FeatureState::validate`], which names the first offending bar.

use std::ops::Range;

use crate::bars::BarsView;

/// A check of bars that vouches for the usual batch without a branch per bar: when every
/// value is non-negative and every timestamp below 2^63, no difference of two of them
/// overflows an `i64`, so each condition (`low <= open, close <= high`, `volume >= 0`,
/// `ts_event` increasing) is the sign of a difference, and OR-ing the values (range) and the
/// differences (signs) checks them all with subtractions and ORs the compiler vectorizes. It
/// never vouches for a bad bar; a batch it does not vouch for (a bad bar, or values outside
/// that range) takes the precise scan.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QuickCheck {
    range: u64,
    signs: i64,
}

impl QuickCheck {
    /// Check bars `range` of `columns`, the first after `last_ts`.
    pub(crate) fn columns(
        &mut self,
        columns: &BarsView<'_>,
        range: Range<usize>,
        last_ts: Option<u64>,
    ) {
        let bars = columns.slice(range);
        let (o, h, l, c, v) = (bars.open, bars.high, bars.low, bars.close, bars.volume);
        for i in 0..o.len() {
            self.bar(o[i], h[i], l[i], c[i], v[i]);
        }
        self.times(bars.ts_event, last_ts);
    }

    /// Check one bar's values.
    #[inline]
    pub(crate) fn bar(&mut self, open: i64, high: i64, low: i64, close: i64, volume: i64) {
        self.range |= (open | high | low | close | volume) as u64;
        self.signs |= high.wrapping_sub(open)
            | high.wrapping_sub(close)
            | open.wrapping_sub(low)
            | close.wrapping_sub(low);
    }

    /// `ts_event` increases strictly, after `last_ts`: each `next - previous - 1` is not
    /// negative.
    pub(crate) fn times(&mut self, ts_event: &[u64], last_ts: Option<u64>) {
        if let (Some(last), Some(&first)) = (last_ts, ts_event.first()) {
            self.range |= last;
            self.signs |= first.wrapping_sub(last).wrapping_sub(1) as i64;
        }
        for pair in ts_event.windows(2) {
            self.range |= pair[1];
            self.signs |= pair[1].wrapping_sub(pair[0]).wrapping_sub(1) as i64;
        }
        self.range |= ts_event.first().copied().unwrap_or(0);
    }

    /// Whether every bar checked is surely valid.
    pub(crate) fn vouches(&self) -> bool {
        self.range >> 63 == 0 && self.signs >= 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules the precise scan applies (`FeatureState::validate`).
    fn valid(columns: &BarsView<'_>, last_ts: Option<u64>) -> bool {
        let mut previous = last_ts;
        (0..columns.ts_event.len()).all(|i| {
            let ts = columns.ts_event[i];
            let in_order = previous.is_none_or(|p| ts > p);
            previous = Some(ts);
            in_order && columns.bar(i).is_consistent()
        })
    }

    #[test]
    fn the_quick_check_never_vouches_for_a_bad_bar() {
        const VALUES: [i64; 12] = [
            i64::MIN,
            i64::MIN + 1,
            -(1 << 62),
            -1,
            0,
            1,
            2,
            10_000,
            1 << 62,
            i64::MAX - 2,
            i64::MAX - 1,
            i64::MAX,
        ];
        const TIMES: [u64; 8] = [
            0,
            1,
            2,
            (1 << 63) - 2,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = |len: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % len as u64).unwrap_or(0)
        };
        let (mut vouched, mut refused_valid) = (0, 0);
        for round in 0..200_000 {
            let n = 1 + next(3);
            let pick = |next: &mut dyn FnMut(usize) -> usize| VALUES[next(VALUES.len())];
            let mut cols: [Vec<i64>; 5] = Default::default();
            for _ in 0..n {
                // Mostly consistent bars around a level, sometimes anything at all.
                let base = if round % 2 == 0 {
                    10_000
                } else {
                    pick(&mut next)
                };
                let bar = [0, 3, 1, 2, 0].map(|k| base.saturating_add(k - next(3) as i64));
                for (column, value) in cols.iter_mut().zip(bar) {
                    column.push(if next(8) == 0 { pick(&mut next) } else { value });
                }
            }
            let first = if next(2) == 0 {
                5
            } else {
                TIMES[next(TIMES.len())]
            };
            let ts: Vec<u64> = (0..n as u64)
                .map(|k| {
                    if next(6) == 0 {
                        TIMES[next(TIMES.len())]
                    } else {
                        first.saturating_add(k)
                    }
                })
                .collect();
            let last_ts = [None, Some(0), Some(4), Some(u64::MAX)][next(4)];
            let columns = BarsView::new(&ts, cols.each_ref().map(Vec::as_slice), None);
            let mut check = QuickCheck::default();
            check.columns(&columns, 0..n, last_ts);
            let is_valid = valid(&columns, last_ts);
            assert!(
                !check.vouches() || is_valid,
                "{columns:?} after {last_ts:?}"
            );
            vouched += usize::from(check.vouches());
            refused_valid += usize::from(is_valid && !check.vouches());
        }
        // Both outcomes are exercised: the check is not vacuous.
        assert!(
            vouched > 1_000 && refused_valid > 100,
            "{vouched} {refused_valid}"
        );
    }
}
