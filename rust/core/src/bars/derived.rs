//! Derived bars in columns, and the exact volume sum every aggregation of bars uses (the
//! per-bucket walk, the fast path over runs and the incremental fold).

use super::BarsView;

/// Derived bars in columns. `ts_event` is each bucket's close (pinned decision 6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Derived {
    /// Bucket closes.
    pub ts_event: Vec<u64>,
    /// First open.
    pub open: Vec<i64>,
    /// Highest high.
    pub high: Vec<i64>,
    /// Lowest low.
    pub low: Vec<i64>,
    /// Last close.
    pub close: Vec<i64>,
    /// Summed volume.
    pub volume: Vec<i64>,
    /// The highest series sequence among the constituents (empty when the input had none):
    /// a derived bar changes whenever any constituent arrives, repairs included.
    pub sequence: Vec<u64>,
}

impl Derived {
    /// The bars as a column view (its `len` is their count); with `sequenced`, their sequences too.
    #[must_use]
    pub fn view(&self, sequenced: bool) -> BarsView<'_> {
        BarsView {
            ts_event: &self.ts_event,
            open: &self.open,
            high: &self.high,
            low: &self.low,
            close: &self.close,
            volume: &self.volume,
            sequence: sequenced.then_some(self.sequence.as_slice()),
        }
    }

    /// Room for `n` bars (and their sequences, when `sequenced`).
    pub(super) fn with_capacity(n: usize, sequenced: bool) -> Self {
        Self {
            ts_event: Vec::with_capacity(n),
            open: Vec::with_capacity(n),
            high: Vec::with_capacity(n),
            low: Vec::with_capacity(n),
            close: Vec::with_capacity(n),
            volume: Vec::with_capacity(n),
            sequence: Vec::with_capacity(if sequenced { n } else { 0 }),
        }
    }
}

/// Exact sum of non-negative volumes, `None` past i64. The 32-bit halves are summed apart in
/// u64 (no overflow for fewer than 2^32 terms), which vectorises where an i128 or checked
/// sum would not.
#[must_use]
pub fn sum_volume(volumes: &[i64]) -> Option<i64> {
    let (mut low, mut high) = (0u64, 0u64);
    for &v in volumes {
        let v = v as u64; // validated non-negative
        low += v & 0xFFFF_FFFF;
        high += v >> 32;
    }
    let total = (u128::from(high) << 32) + u128::from(low);
    i64::try_from(total).ok()
}
