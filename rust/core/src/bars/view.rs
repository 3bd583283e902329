//! The one borrowed column view of bars ([`BarsView`]), struct of arrays, oldest first: prices
//! and volumes as the series holds them (`i64` mantissas, the default), or as the feature
//! kernels read a block of them (`f64`, converted once: `crate::features::primitives::block`).
//! A loop reads only the columns it needs, contiguously.

use std::ops::Range;

use super::{Bar, BarsError, MAX_TS, MINUTE_NS};

/// Borrowed columns of bars of one length, sorted strictly by `ts_event` (the close time).
/// Prices and volumes are `V`: raw fixed-point mantissas at the series' scales by default.
#[derive(Debug, Clone, Copy)]
pub struct BarsView<'a, V = i64> {
    /// Close times, nanoseconds, strictly increasing (each a whole minute for 1-minute bars).
    pub ts_event: &'a [u64],
    /// Opens.
    pub open: &'a [V],
    /// Highs.
    pub high: &'a [V],
    /// Lows.
    pub low: &'a [V],
    /// Closes.
    pub close: &'a [V],
    /// Volumes.
    pub volume: &'a [V],
    /// Series sequence numbers (None for offline input without them, and for `f64` blocks).
    pub sequence: Option<&'a [u64]>,
}

impl<'a, V> BarsView<'a, V> {
    /// The view of close times `ts_event`, the columns `[open, high, low, close, volume]` and
    /// the sequences, if any (lengths are checked by [`BarsView::validate`], not here).
    #[must_use]
    pub fn new(
        ts_event: &'a [u64],
        [open, high, low, close, volume]: [&'a [V]; 5],
        sequence: Option<&'a [u64]>,
    ) -> Self {
        Self {
            ts_event,
            open,
            high,
            low,
            close,
            volume,
            sequence,
        }
    }

    /// The lengths of the price and volume columns, in field order.
    #[must_use]
    pub fn column_lengths(&self) -> [usize; 5] {
        [
            self.open.len(),
            self.high.len(),
            self.low.len(),
            self.close.len(),
            self.volume.len(),
        ]
    }

    /// Number of bars (the length of `ts_event`).
    #[must_use]
    pub fn len(&self) -> usize {
        self.ts_event.len()
    }

    /// Whether there are no bars.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ts_event.is_empty()
    }

    /// The bars in `range` (every column sliced alike, the sequences too).
    ///
    /// # Panics
    /// When `range` runs past a column.
    #[must_use]
    pub fn slice(&self, range: Range<usize>) -> Self {
        Self {
            ts_event: &self.ts_event[range.clone()],
            open: &self.open[range.clone()],
            high: &self.high[range.clone()],
            low: &self.low[range.clone()],
            close: &self.close[range.clone()],
            volume: &self.volume[range.clone()],
            sequence: self.sequence.map(|s| &s[range]),
        }
    }

    /// The bars from `from` on.
    ///
    /// # Panics
    /// As [`Self::slice`].
    #[must_use]
    pub fn tail(&self, from: usize) -> Self {
        self.slice(from..self.len())
    }
}

impl BarsView<'_> {
    /// The bar at `index`, which must be below [`Self::len`].
    #[must_use]
    pub fn bar(&self, index: usize) -> Bar {
        Bar {
            ts_event: self.ts_event[index],
            open: self.open[index],
            high: self.high[index],
            low: self.low[index],
            close: self.close[index],
            volume: self.volume[index],
        }
    }

    /// Check the view: equal lengths, whole minutes, strictly increasing, and each bar's
    /// high/low bracketing its open and close.
    ///
    /// # Errors
    /// [`BarsError`] naming the first offending index.
    pub fn validate(&self) -> Result<(), BarsError> {
        let n = self.ts_event.len();
        let lengths = self.column_lengths();
        if lengths.iter().any(|&l| l != n) || self.sequence.is_some_and(|s| s.len() != n) {
            return Err(BarsError::LengthMismatch {
                expected: n,
                lengths: lengths
                    .iter()
                    .copied()
                    .chain(self.sequence.map(<[u64]>::len))
                    .collect(),
            });
        }
        for i in 0..n {
            let previous = i.checked_sub(1).map(|p| self.ts_event[p]);
            check_bar(i, &self.bar(i), previous)?;
        }
        Ok(())
    }
}

/// The checks of the bar at `index` of a view, in the order [`BarsView::validate`] reports
/// them: the timestamp in range, on a whole minute, after the `previous` bar's; high and low
/// bracketing open and close; volume not negative.
#[inline]
pub(super) fn check_bar(index: usize, bar: &Bar, previous: Option<u64>) -> Result<(), BarsError> {
    let ts_event = bar.ts_event;
    if ts_event > MAX_TS {
        return Err(BarsError::TimestampOutOfRange { index, ts_event });
    }
    if ts_event % MINUTE_NS != 0 || ts_event == 0 {
        return Err(BarsError::NotMinuteAligned { index, ts_event });
    }
    if let Some(previous) = previous.filter(|&p| ts_event <= p) {
        return Err(BarsError::Unsorted {
            index,
            ts_event,
            previous,
        });
    }
    if !bar.is_consistent() {
        return Err(BarsError::InconsistentBar { index, ts_event });
    }
    Ok(())
}
