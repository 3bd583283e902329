//! The durable 1-minute series of one instrument on one channel: at most `capacity` closed
//! bars (5,000 by default), oldest evicted first, each with a series-scoped sequence number
//! that only increases, beside the coverage the series observed.
//!
//! The one rule for arrivals: a bar is accepted when no bar with its `ts_event` is held.
//! Accepted bars take the next sequence number and the series stays sorted by `ts_event`.
//! An arrival with a `ts_event` already held is a duplicate and is dropped (the first close
//! wins: a served bar never changes). An arrival older than the newest bar is counted as
//! out of order; it fills its minute if that minute is empty (a late or repaired bar), unless
//! it is older than everything retained in a full series (then it is dropped as too old).

use super::{fold, BarsError, BarsView, Channel, Coverage, FoldOutput, Resolution, MINUTE_NS};

/// Closed bars kept per series by default (spec, "Limits").
pub const DEFAULT_CAPACITY: usize = 5_000;

/// How a series is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesConfig {
    /// Which channel this series holds.
    pub channel: Channel,
    /// Fractional digits of prices.
    pub price_scale: u8,
    /// Fractional digits of volumes.
    pub size_scale: u8,
    /// Most bars retained.
    pub capacity: usize,
}

impl SeriesConfig {
    /// A config with the default capacity, checking the precisions.
    ///
    /// # Errors
    /// [`BarsError::BadPrecision`] for a precision above 18.
    pub fn new(channel: Channel, price_scale: i64, size_scale: i64) -> Result<Self, BarsError> {
        Ok(Self {
            channel,
            price_scale: precision("price", price_scale)?,
            size_scale: precision("size", size_scale)?,
            capacity: DEFAULT_CAPACITY,
        })
    }
}

fn precision(what: &'static str, value: i64) -> Result<u8, BarsError> {
    u8::try_from(value)
        .ok()
        .filter(|p| *p <= crate::MAX_SCALE)
        .ok_or(BarsError::BadPrecision {
            what,
            precision: value,
        })
}

/// One closed 1-minute bar (raw mantissas at the series' scales).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// Close time, ns (a whole minute).
    pub ts_event: u64,
    /// Open.
    pub open: i64,
    /// High.
    pub high: i64,
    /// Low.
    pub low: i64,
    /// Close.
    pub close: i64,
    /// Volume.
    pub volume: i64,
}

impl Bar {
    /// A bar from its values in column order.
    #[must_use]
    pub const fn new(
        ts_event: u64,
        open: i64,
        high: i64,
        low: i64,
        close: i64,
        volume: i64,
    ) -> Self {
        Self {
            ts_event,
            open,
            high,
            low,
            close,
            volume,
        }
    }

    /// Whether the high and low bracket the open and close and the volume is not negative.
    #[inline]
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        self.high >= self.open.max(self.close)
            && self.low <= self.open.min(self.close)
            && self.volume >= 0
    }

    /// The checks of [`BarsView::validate`] on this one bar (errors name index 0).
    #[inline]
    pub(crate) fn check(&self) -> Result<(), BarsError> {
        super::view::check_bar(0, self, None)
    }
}

/// What happened to one arrival.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// Newer than every held bar: appended with this sequence.
    Appended(u64),
    /// Older than the newest, into an empty minute: inserted with this sequence.
    Inserted(u64),
    /// Its minute is already held: dropped.
    Duplicate,
    /// Older than everything retained in a full series: dropped.
    TooOld,
    /// Malformed: dropped.
    Rejected(BarsError),
}

/// Per-series counters (each a real count since the series was created).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Bars accepted (appended or inserted).
    pub accepted: u64,
    /// Arrivals whose minute was already held.
    pub duplicates: u64,
    /// Arrivals older than the newest bar.
    pub out_of_order: u64,
    /// Bars evicted to keep the capacity.
    pub evicted: u64,
    /// Arrivals dropped as older than the retained window.
    pub too_old: u64,
    /// Malformed arrivals.
    pub rejected: u64,
}

/// Where to resume after a restart: the newest closed bar and the first unobserved minute
/// above it. A ready series asks the venue only for `[resume_from, now)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumeHint {
    /// Close of the newest bar held.
    pub newest_ts_event: Option<u64>,
    /// Its sequence.
    pub newest_sequence: Option<u64>,
    /// The first unobserved instant at or above the newest close.
    pub resume_from: Option<u64>,
}

/// The series. Columns are kept apart (structure of arrays) so folds run over slices.
#[derive(Debug)]
pub struct Series {
    config: SeriesConfig,
    /// Index of the oldest retained bar in the columns (eviction advances it; the columns
    /// are compacted once it passes the capacity, so eviction is O(1) amortised).
    head: usize,
    ts_event: Vec<u64>,
    open: Vec<i64>,
    high: Vec<i64>,
    low: Vec<i64>,
    close: Vec<i64>,
    volume: Vec<i64>,
    sequence: Vec<u64>,
    last_sequence: u64,
    coverage: Coverage,
    counters: Counters,
    /// Bumped by every call that may change bars, coverage or counters: a cache of anything
    /// read from the series is fresh while the revision is unchanged.
    revision: u64,
}

/// A copy with the same spare room: a derived `Clone` would allocate exactly the length,
/// so the copy's next push would reallocate and move every column.
#[allow(clippy::ptr_arg)] // the capacity is what is copied
fn clone_with_room<T: Copy>(column: &Vec<T>) -> Vec<T> {
    let mut copy = Vec::with_capacity(column.capacity());
    copy.extend_from_slice(column);
    copy
}

impl Clone for Series {
    fn clone(&self) -> Self {
        Self {
            config: self.config,
            head: self.head,
            ts_event: clone_with_room(&self.ts_event),
            open: clone_with_room(&self.open),
            high: clone_with_room(&self.high),
            low: clone_with_room(&self.low),
            close: clone_with_room(&self.close),
            volume: clone_with_room(&self.volume),
            sequence: clone_with_room(&self.sequence),
            last_sequence: self.last_sequence,
            coverage: self.coverage.clone(),
            counters: self.counters,
            revision: self.revision,
        }
    }
}

impl Series {
    /// An empty series.
    ///
    /// # Errors
    /// [`BarsError::BadCapacity`] for a zero capacity.
    pub fn new(config: SeriesConfig) -> Result<Self, BarsError> {
        if config.capacity == 0 {
            return Err(BarsError::BadCapacity { capacity: 0 });
        }
        let room = config.capacity.min(DEFAULT_CAPACITY) + 1;
        Ok(Self {
            config,
            head: 0,
            ts_event: Vec::with_capacity(room),
            open: Vec::with_capacity(room),
            high: Vec::with_capacity(room),
            low: Vec::with_capacity(room),
            close: Vec::with_capacity(room),
            volume: Vec::with_capacity(room),
            sequence: Vec::with_capacity(room),
            last_sequence: 0,
            coverage: Coverage::new(),
            counters: Counters::default(),
            revision: 0,
        })
    }

    /// The configuration.
    #[must_use]
    pub const fn config(&self) -> &SeriesConfig {
        &self.config
    }

    /// Bars held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ts_event.len() - self.head
    }

    /// Whether no bar is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The counters.
    #[must_use]
    pub const fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The observed spans.
    #[must_use]
    pub const fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// The highest sequence handed out so far (0 before the first bar).
    #[must_use]
    pub const fn last_sequence(&self) -> u64 {
        self.last_sequence
    }

    /// The revision (see the field): changes whenever the series may have.
    #[must_use]
    pub const fn revision(&self) -> u64 {
        self.revision
    }

    /// The bars held, oldest first.
    #[must_use]
    pub fn view(&self) -> BarsView<'_> {
        let h = self.head;
        BarsView {
            ts_event: &self.ts_event[h..],
            open: &self.open[h..],
            high: &self.high[h..],
            low: &self.low[h..],
            close: &self.close[h..],
            volume: &self.volume[h..],
            sequence: Some(&self.sequence[h..]),
        }
    }

    /// Each pair of consecutive held closes more than a minute apart, as `(earlier, later)`:
    /// the minutes between them hold no bar (gaps on EXTERNAL, quiet minutes on INTERNAL).
    #[must_use]
    pub fn jumps(&self) -> Vec<(u64, u64)> {
        self.view()
            .ts_event
            .windows(2)
            .filter(|pair| pair[1] - pair[0] > MINUTE_NS)
            .map(|pair| (pair[0], pair[1]))
            .collect()
    }

    /// Record that `[start, end)` was observed (connected, or covered by a history answer).
    ///
    /// # Errors
    /// [`BarsError::InvalidSpan`] when `end <= start`.
    pub fn observe(&mut self, start: u64, end: u64) -> Result<(), BarsError> {
        self.revision += 1;
        self.coverage.observe(start, end)
    }

    /// Record that the venue's history answered for `[start, end)` (rounded inward to whole
    /// minutes) and held no candle for the minutes of it this series holds no bar for: those
    /// are confirmed empty, no longer gaps (see [`Coverage`]). Returns the minutes newly
    /// confirmed, as spans.
    ///
    /// # Errors
    /// [`BarsError::InvalidSpan`] when `end <= start`; nothing changes then.
    pub fn confirm_empty(&mut self, start: u64, end: u64) -> Result<Vec<(u64, u64)>, BarsError> {
        let mut probe = Coverage::new();
        probe.observe(start, end)?; // the same checks and rounding
        let Some(&(start, end)) = probe.spans().first() else {
            return Ok(Vec::new());
        };
        self.revision += 1;
        let mut holes = Vec::new();
        self.each_hole(start, end, |a, b| {
            holes.push((a, b));
            true
        });
        for &(a, b) in &holes {
            self.coverage.confirm_empty(a, b)?;
        }
        Ok(holes)
    }

    /// The minutes of `[start, end)` (aligned) holding no bar and not confirmed empty, as
    /// spans handed to `each` until it returns false; whether it was never stopped.
    fn each_hole(&self, start: u64, end: u64, mut each: impl FnMut(u64, u64) -> bool) -> bool {
        let ts = self.view().ts_event;
        let mut i = ts.partition_point(|&t| t <= start);
        let mut open = start;
        while let Some(&close) = ts.get(i).filter(|&&t| t <= end) {
            if close - MINUTE_NS > open
                && !self
                    .coverage
                    .unconfirmed_parts(open, close - MINUTE_NS, &mut each)
            {
                return false;
            }
            open = close;
            i += 1;
        }
        open >= end || self.coverage.unconfirmed_parts(open, end, each)
    }

    /// Walk what is unresolved now, oldest first, handing each span to `each` until it
    /// returns false: time not observed between the first observation and the watermark,
    /// and on EXTERNAL each observed minute without a candle the venue has not confirmed
    /// empty. Touching spans are handed over as one.
    fn each_unresolved(&self, mut each: impl FnMut(u64, u64) -> bool) -> bool {
        let external = self.config.channel == Channel::External;
        let mut pending: Option<(u64, u64)> = None;
        let mut emit = |a: u64, b: u64| match pending {
            Some((s, e)) if e == a => {
                pending = Some((s, b));
                true
            }
            Some((s, e)) => {
                pending = Some((a, b));
                each(s, e)
            }
            None => {
                pending = Some((a, b));
                true
            }
        };
        let spans = self.coverage.spans();
        for (k, &(start, end)) in spans.iter().enumerate() {
            if external && !self.each_hole(start, end, &mut emit) {
                return false;
            }
            if let Some(&(next, _)) = spans.get(k + 1) {
                if !emit(end, next) {
                    return false;
                }
            }
        }
        match pending {
            Some((s, e)) => each(s, e),
            None => true,
        }
    }

    /// The unresolved gaps now (see `each_unresolved`): what backfill or repair has still to
    /// resolve, as `[start, end)` spans, oldest first.
    #[must_use]
    pub fn unresolved(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.each_unresolved(|a, b| {
            out.push((a, b));
            true
        });
        out
    }

    /// Whether anything is unresolved now (stops at the first gap).
    #[must_use]
    pub fn has_unresolved(&self) -> bool {
        !self.each_unresolved(|_, _| false)
    }

    /// Give the held bars the sequences they had before a restart (oldest bar first), and
    /// continue numbering above `last_sequence`: a reloaded series serves its bars as it
    /// served them before, and a client paging by `after_sequence` misses nothing.
    ///
    /// # Errors
    /// [`BarsError::InvalidSequence`] unless there is one sequence per held bar, each in
    /// `1..=last_sequence`, no two equal, and `last_sequence` is at least the current one;
    /// nothing changes then.
    pub fn resequence(&mut self, sequence: &[u64], last_sequence: u64) -> Result<(), BarsError> {
        let refuse = |detail: String| Err(BarsError::InvalidSequence { detail });
        if sequence.len() != self.len() {
            return refuse(format!(
                "{} sequences for {} held bars; give one per bar, oldest first",
                sequence.len(),
                self.len()
            ));
        }
        if last_sequence < self.last_sequence {
            return refuse(format!(
                "last sequence {last_sequence} is below the series' {}; sequences only increase",
                self.last_sequence
            ));
        }
        if let Some(bad) = sequence.iter().find(|&&s| s == 0 || s > last_sequence) {
            return refuse(format!(
                "sequence {bad} is outside 1..={last_sequence} (the last sequence)"
            ));
        }
        let mut sorted = sequence.to_vec();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return refuse(format!("sequence {} is given twice", pair[0]));
        }
        self.revision += 1;
        self.sequence.truncate(self.head);
        self.sequence.extend_from_slice(sequence);
        self.last_sequence = last_sequence;
        Ok(())
    }

    /// Take one closed bar by the series' arrival rule (see the module docs).
    pub fn push(&mut self, bar: Bar) -> PushOutcome {
        self.revision += 1;
        if let Err(error) = bar.check() {
            self.counters.rejected += 1;
            return PushOutcome::Rejected(error);
        }
        let held = &self.ts_event[self.head..];
        let outcome = match held.last() {
            None => self.append(bar),
            Some(&newest) if bar.ts_event > newest => self.append(bar),
            Some(_) => {
                let position = held.partition_point(|&t| t < bar.ts_event);
                if held.get(position) == Some(&bar.ts_event) {
                    self.counters.duplicates += 1;
                    return PushOutcome::Duplicate;
                }
                self.counters.out_of_order += 1;
                if position == 0 && self.len() >= self.config.capacity {
                    self.counters.too_old += 1;
                    return PushOutcome::TooOld;
                }
                self.insert(self.head + position, bar)
            }
        };
        // The bar's own minute was observed: a candle or a trade bar is proof of it (and, if
        // the venue had confirmed it empty, it is held now).
        self.coverage
            .insert_minute(bar.ts_event - MINUTE_NS, bar.ts_event);
        if !self.coverage.confirmed().is_empty() {
            self.coverage
                .unconfirm(bar.ts_event - MINUTE_NS, bar.ts_event);
        }
        self.evict_over_capacity();
        outcome
    }

    /// Bulk load a validated view through the arrival rule (history, backfill, reload).
    ///
    /// # Errors
    /// The view's own validation error; nothing is loaded then.
    pub fn extend(&mut self, view: &BarsView<'_>) -> Result<Vec<PushOutcome>, BarsError> {
        view.validate()?;
        Ok((0..view.len()).map(|i| self.push(view.bar(i))).collect())
    }

    fn next_sequence(&mut self) -> u64 {
        self.last_sequence += 1;
        self.counters.accepted += 1;
        self.last_sequence
    }

    fn append(&mut self, bar: Bar) -> PushOutcome {
        let sequence = self.next_sequence();
        self.ts_event.push(bar.ts_event);
        self.open.push(bar.open);
        self.high.push(bar.high);
        self.low.push(bar.low);
        self.close.push(bar.close);
        self.volume.push(bar.volume);
        self.sequence.push(sequence);
        PushOutcome::Appended(sequence)
    }

    fn insert(&mut self, index: usize, bar: Bar) -> PushOutcome {
        let sequence = self.next_sequence();
        self.ts_event.insert(index, bar.ts_event);
        self.open.insert(index, bar.open);
        self.high.insert(index, bar.high);
        self.low.insert(index, bar.low);
        self.close.insert(index, bar.close);
        self.volume.insert(index, bar.volume);
        self.sequence.insert(index, sequence);
        PushOutcome::Inserted(sequence)
    }

    fn evict_over_capacity(&mut self) {
        while self.len() > self.config.capacity {
            let evicted_close = self.ts_event[self.head];
            self.head += 1;
            self.counters.evicted += 1;
            // What came before the evicted bar's close is no longer held: not observed now.
            self.coverage.trim_before(evicted_close);
        }
        if self.head > self.config.capacity {
            let h = self.head;
            self.ts_event.drain(..h);
            self.open.drain(..h);
            self.high.drain(..h);
            self.low.drain(..h);
            self.close.drain(..h);
            self.volume.drain(..h);
            self.sequence.drain(..h);
            self.head = 0;
        }
    }

    /// The resume hint (see [`ResumeHint`]).
    #[must_use]
    pub fn resume_hint(&self) -> ResumeHint {
        let view = self.view();
        let newest = view.ts_event.last().copied();
        ResumeHint {
            newest_ts_event: newest,
            newest_sequence: view.sequence.and_then(|s| s.last().copied()),
            resume_from: newest.map(|t| self.coverage.span_end_at(t).unwrap_or(t)),
        }
    }

    /// Fold the held bars to `resolution` (see [`fold`]).
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`].
    pub fn fold(&self, resolution: Resolution) -> Result<FoldOutput, BarsError> {
        fold(
            &self.view(),
            &self.coverage,
            self.config.channel,
            resolution,
        )
    }
}
