//! Bars: the durable 1-minute series, its coverage, and folding to derived resolutions on the
//! UTC calendar grid (pinned decision 6) with gap withholding (DESIGN.md, "Gaps and sparse
//! series").

mod coverage;
mod derived;
mod error;
mod fold;
mod incremental;
mod page;
mod resolution;
mod runs;
mod series;

pub use coverage::Coverage;
pub use derived::Derived;
pub use error::BarsError;
pub use fold::{fold, fold_many, FoldOutput, Withheld, WithheldReason};
pub use incremental::{Closed, IncrementalFold};
pub use page::{write_bar_row, write_decimal, write_page, Page, PageQuery};
pub use resolution::{Channel, Resolution, MINUTE_NS};

/// The last instant a bar or a coverage span may carry: 2^63-1 ns (year 2262). Arrow's
/// `timestamp[ns]` is signed, and below it every bucket end (up to a day past) fits a `u64`.
pub const MAX_TS: u64 = i64::MAX as u64;
pub use series::{Bar, Counters, PushOutcome, ResumeHint, Series, SeriesConfig, DEFAULT_CAPACITY};

/// A borrowed column view of 1-minute bars, sorted strictly by `ts_event` (the close time).
/// Prices and volumes are raw fixed-point mantissas at the series' scales.
#[derive(Debug, Clone, Copy)]
pub struct BarsView<'a> {
    /// Close times, nanoseconds, strictly increasing, each a whole minute.
    pub ts_event: &'a [u64],
    /// Opens.
    pub open: &'a [i64],
    /// Highs.
    pub high: &'a [i64],
    /// Lows.
    pub low: &'a [i64],
    /// Closes.
    pub close: &'a [i64],
    /// Volumes.
    pub volume: &'a [i64],
    /// Series sequence numbers (None for offline input without them).
    pub sequence: Option<&'a [u64]>,
}

impl<'a> BarsView<'a> {
    /// Number of bars.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ts_event.len()
    }

    /// Whether there are no bars.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ts_event.is_empty()
    }

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

    /// The bars in `range` (every column sliced alike, the sequences too).
    ///
    /// # Panics
    /// When `range` runs past a column.
    #[must_use]
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
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

    /// Check the view: equal lengths, whole minutes, strictly increasing, and each bar's
    /// high/low bracketing its open and close.
    ///
    /// # Errors
    /// [`BarsError`] naming the first offending index.
    pub fn validate(&self) -> Result<(), BarsError> {
        let n = self.ts_event.len();
        let lengths = [
            self.open.len(),
            self.high.len(),
            self.low.len(),
            self.close.len(),
            self.volume.len(),
        ];
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
fn check_bar(index: usize, bar: &Bar, previous: Option<u64>) -> Result<(), BarsError> {
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
