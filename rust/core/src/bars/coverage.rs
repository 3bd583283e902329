//! Coverage: the spans of time a series observed. A minute outside every span is unobserved
//! (the node was down, or backfill has not reached it): a gap, never a quiet minute.
//!
//! Beside them, the minutes the venue confirmed empty: its history answered for them and held
//! no candle. On EXTERNAL such a minute is no gap (the venue had nothing to send); it counts as
//! a no-trade minute does on INTERNAL.

use super::{BarsError, MINUTE_NS};

/// Sorted, disjoint, non-adjacent `[start, end)` spans on the minute grid: observed, and
/// confirmed empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    spans: Vec<(u64, u64)>,
    confirmed: Vec<(u64, u64)>,
}

impl Coverage {
    /// No observation at all.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            spans: Vec::new(),
            confirmed: Vec::new(),
        }
    }

    /// Coverage from arbitrary spans (overlapping, unsorted, touching), merged.
    ///
    /// # Errors
    /// [`BarsError::InvalidSpan`] for a span with `end <= start`.
    pub fn from_spans(spans: impl IntoIterator<Item = (u64, u64)>) -> Result<Self, BarsError> {
        // Sorted first, each merge extends the newest span (O(1)); in any other order a
        // merge may shift the spans after it (quadratic over many spans). The union is the same.
        let mut spans: Vec<(u64, u64)> = spans.into_iter().collect();
        spans.sort_unstable();
        let mut coverage = Self::new();
        for (start, end) in spans {
            coverage.observe(start, end)?;
        }
        Ok(coverage)
    }

    /// Record that `[start, end)` was observed. The span is rounded inward to whole minutes
    /// (a minute observed in part was not observed); what is left may be empty.
    ///
    /// # Errors
    /// [`BarsError::InvalidSpan`] when `end <= start`.
    pub fn observe(&mut self, start: u64, end: u64) -> Result<(), BarsError> {
        if let Some((start, end)) = inward(start, end)? {
            insert(&mut self.spans, start, end);
        }
        Ok(())
    }

    /// Record that the venue confirmed `[start, end)` empty (rounded inward like
    /// [`Coverage::observe`]). [`super::Series::confirm_empty`] confirms only the minutes it
    /// holds no bar for; a fold reads a confirmed minute that holds one as held.
    ///
    /// # Errors
    /// [`BarsError::InvalidSpan`] when `end <= start`.
    pub fn confirm_empty(&mut self, start: u64, end: u64) -> Result<(), BarsError> {
        if let Some((start, end)) = inward(start, end)? {
            insert(&mut self.confirmed, start, end);
        }
        Ok(())
    }

    /// Mark one aligned minute (or any aligned span) observed.
    pub(crate) fn insert_minute(&mut self, start: u64, end: u64) {
        insert(&mut self.spans, start, end);
    }

    /// A candle arrived for an aligned span confirmed empty: it is held now, not empty.
    pub(crate) fn unconfirm(&mut self, start: u64, end: u64) {
        let spans = &mut self.confirmed;
        let first = spans.partition_point(|&(_, e)| e <= start);
        let last = spans.partition_point(|&(s, _)| s < end);
        if first >= last {
            return;
        }
        let (head, tail) = (spans[first].0, spans[last - 1].1);
        let kept = [(head, start), (end, tail)];
        spans.splice(first..last, kept.into_iter().filter(|&(s, e)| s < e));
    }

    /// Forget everything observed (and confirmed) before `t` (after eviction, bars before `t`
    /// are gone).
    pub fn trim_before(&mut self, t: u64) {
        for spans in [&mut self.spans, &mut self.confirmed] {
            let keep = spans.partition_point(|&(_, e)| e <= t);
            spans.drain(..keep);
            if let Some(first) = spans.first_mut() {
                first.0 = first.0.max(t);
            }
        }
    }

    /// The spans confirmed empty, oldest first.
    #[must_use]
    pub fn confirmed(&self) -> &[(u64, u64)] {
        &self.confirmed
    }

    /// Whether `[start, end)` lies inside one span confirmed empty.
    #[must_use]
    pub fn confirmed_covers(&self, start: u64, end: u64) -> bool {
        let i = self.confirmed.partition_point(|&(_, e)| e <= start);
        self.confirmed
            .get(i)
            .is_some_and(|&(s, e)| s <= start && end <= e)
    }

    /// The parts of `[start, end)` not confirmed empty, in order, handed to `each` until it
    /// returns false; whether it was never stopped.
    pub(crate) fn unconfirmed_parts(
        &self,
        start: u64,
        end: u64,
        mut each: impl FnMut(u64, u64) -> bool,
    ) -> bool {
        let mut j = self.confirmed.partition_point(|&(_, e)| e <= start);
        let mut at = start;
        while at < end {
            match self.confirmed.get(j) {
                Some(&(s, e)) if s < end => {
                    if s > at && !each(at, s) {
                        return false;
                    }
                    at = at.max(e);
                    j += 1;
                }
                _ => return each(at, end),
            }
        }
        true
    }

    /// Whether `[start, end)` lies inside one observed span.
    #[must_use]
    pub fn covers(&self, start: u64, end: u64) -> bool {
        // Live closes ask about the newest span: no search then.
        if self
            .spans
            .last()
            .is_some_and(|&(s, e)| s <= start && end <= e)
        {
            return true;
        }
        let i = self.spans.partition_point(|&(_, e)| e <= start);
        self.spans
            .get(i)
            .is_some_and(|&(s, e)| s <= start && end <= e)
    }

    /// The end of the span holding the minute that starts at `t` (`s <= t < e`), if one does:
    /// every bucket from `t` up to that end is covered, so a fold checks a run of buckets with
    /// one search instead of one per bucket.
    #[must_use]
    pub(crate) fn covered_until(&self, t: u64) -> Option<u64> {
        let i = self.spans.partition_point(|&(_, e)| e <= t);
        self.spans.get(i).filter(|&&(s, _)| s <= t).map(|&(_, e)| e)
    }

    /// Whether `[start, end)` touches any observed span.
    #[must_use]
    pub fn intersects(&self, start: u64, end: u64) -> bool {
        let i = self.spans.partition_point(|&(_, e)| e <= start);
        self.spans.get(i).is_some_and(|&(s, _)| s < end)
    }

    /// The observed watermark: the end of the newest span.
    #[must_use]
    pub fn watermark(&self) -> Option<u64> {
        self.spans.last().map(|&(_, e)| e)
    }

    /// The start of the oldest span.
    #[must_use]
    pub fn first_start(&self) -> Option<u64> {
        self.spans.first().map(|&(s, _)| s)
    }

    /// The end of the span containing instant `t` (`t` may equal the span's end).
    #[must_use]
    pub fn span_end_at(&self, t: u64) -> Option<u64> {
        let i = self.spans.partition_point(|&(_, e)| e < t);
        self.spans.get(i).filter(|&&(s, _)| s <= t).map(|&(_, e)| e)
    }

    /// The first observed instant at or after `t`.
    #[must_use]
    pub fn next_observed(&self, t: u64) -> Option<u64> {
        let i = self.spans.partition_point(|&(_, e)| e <= t);
        self.spans.get(i).map(|&(s, _)| s.max(t))
    }

    /// The spans, oldest first.
    #[must_use]
    pub fn spans(&self) -> &[(u64, u64)] {
        &self.spans
    }

    /// The unobserved spans between the first observation and the watermark.
    #[must_use]
    pub fn gaps(&self) -> Vec<(u64, u64)> {
        self.spans.windows(2).map(|w| (w[0].1, w[1].0)).collect()
    }
}

/// `[start, end)` rounded inward to whole minutes (None when nothing is left).
fn inward(start: u64, end: u64) -> Result<Option<(u64, u64)>, BarsError> {
    if end <= start || end > super::MAX_TS {
        return Err(BarsError::InvalidSpan { start, end });
    }
    let start = start.div_ceil(MINUTE_NS) * MINUTE_NS;
    let end = end / MINUTE_NS * MINUTE_NS;
    Ok((start < end).then_some((start, end)))
}

/// Merge one aligned span. The common case (extending the newest span) is O(1).
fn insert(spans: &mut Vec<(u64, u64)>, start: u64, end: u64) {
    if let Some(last) = spans.last_mut() {
        if start >= last.0 && start <= last.1 {
            last.1 = last.1.max(end);
            return;
        }
        if start > last.1 {
            spans.push((start, end));
            return;
        }
    } else {
        spans.push((start, end));
        return;
    }
    // General case: merge every span that overlaps or touches [start, end).
    let first = spans.partition_point(|&(_, e)| e < start);
    let last = spans.partition_point(|&(s, _)| s <= end);
    let merged_start = spans.get(first).map_or(start, |&(s, _)| s.min(start));
    let merged_end = if last > first {
        spans[last - 1].1.max(end)
    } else {
        end
    };
    spans.splice(first..last, [(merged_start, merged_end)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = MINUTE_NS;

    #[test]
    fn merges_overlapping_and_touching_spans() {
        let c = Coverage::from_spans([
            (10 * M, 20 * M),
            (30 * M, 40 * M),
            (20 * M, 25 * M),
            (5 * M, 11 * M),
        ]);
        assert_eq!(
            c.map(|c| c.spans().to_vec()),
            Ok(vec![(5 * M, 25 * M), (30 * M, 40 * M)])
        );
        let c = Coverage::from_spans([(30 * M, 40 * M), (10 * M, 20 * M), (15 * M, 35 * M)]);
        assert_eq!(c.map(|c| c.spans().to_vec()), Ok(vec![(10 * M, 40 * M)]));
    }

    #[test]
    fn rounds_inward_and_refuses_empty_spans() {
        let c = Coverage::from_spans([(M + 1, 3 * M - 1)]);
        assert_eq!(c.map(|c| c.spans().is_empty()), Ok(true));
        let c = Coverage::from_spans([(M + 1, 4 * M - 1)]);
        assert_eq!(c.map(|c| c.spans().to_vec()), Ok(vec![(2 * M, 3 * M)]));
        assert!(Coverage::from_spans([(5 * M, 5 * M)]).is_err());
    }

    #[test]
    fn answers_cover_and_watermark_queries() {
        let Ok(c) = Coverage::from_spans([(10 * M, 20 * M), (30 * M, 40 * M)]) else {
            return;
        };
        assert!(c.covers(10 * M, 20 * M));
        assert!(!c.covers(15 * M, 31 * M));
        // The newest span answers without a search; the others still answer.
        assert!(c.covers(32 * M, 40 * M));
        assert!(!c.covers(35 * M, 41 * M));
        assert!(!c.covers(25 * M, 35 * M));
        assert!(c.covers(12 * M, 13 * M));
        assert!(c.intersects(19 * M, 31 * M));
        assert!(!c.intersects(20 * M, 30 * M));
        assert_eq!(c.watermark(), Some(40 * M));
        assert_eq!(c.span_end_at(20 * M), Some(20 * M));
        assert_eq!(c.span_end_at(25 * M), None);
        assert_eq!(c.next_observed(25 * M), Some(30 * M));
        assert_eq!(c.gaps(), vec![(20 * M, 30 * M)]);
        let mut t = c.clone();
        t.trim_before(15 * M);
        assert_eq!(t.spans(), &[(15 * M, 20 * M), (30 * M, 40 * M)]);
        t.trim_before(35 * M);
        assert_eq!(t.spans(), &[(35 * M, 40 * M)]);
    }

    #[test]
    fn confirmed_spans_merge_split_and_trim() {
        let mut c = Coverage::new();
        assert!(c.confirm_empty(10 * M, 12 * M).is_ok());
        assert!(c.confirm_empty(12 * M, 13 * M).is_ok());
        assert!(c.confirm_empty(20 * M + 1, 22 * M).is_ok()); // rounded inward
        assert!(c.confirm_empty(3 * M, 3 * M).is_err());
        assert_eq!(c.confirmed(), &[(10 * M, 13 * M), (21 * M, 22 * M)]);
        assert!(c.confirmed_covers(11 * M, 13 * M) && !c.confirmed_covers(12 * M, 14 * M));
        let mut parts = Vec::new();
        c.unconfirmed_parts(9 * M, 25 * M, |s, e| {
            parts.push((s / M, e / M));
            true
        });
        assert_eq!(parts, vec![(9, 10), (13, 21), (22, 25)]);
        c.unconfirm(11 * M, 12 * M);
        assert_eq!(
            c.confirmed(),
            &[(10 * M, 11 * M), (12 * M, 13 * M), (21 * M, 22 * M)]
        );
        c.trim_before(12 * M);
        assert_eq!(c.confirmed(), &[(12 * M, 13 * M), (21 * M, 22 * M)]);
        assert!(c.spans().is_empty());
    }
}
