//! Refusals of the bars kernels, each naming the offending value and what is allowed.

/// A refused bar input or fold request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarsError {
    /// Not one of 1m, 5m, 15m, 30m, 1h, 4h, 1d.
    #[error(
        "UNKNOWN_RESOLUTION: {name:?} is not a resolution; allowed: 1m, 5m, 15m, 30m, 1h, 4h, 1d"
    )]
    UnknownResolution {
        /// The refused name.
        name: String,
    },
    /// Not EXTERNAL or INTERNAL.
    #[error("UNKNOWN_CHANNEL: {name:?} is not a bar channel; allowed: EXTERNAL, INTERNAL")]
    UnknownChannel {
        /// The refused name.
        name: String,
    },
    /// Columns of different lengths.
    #[error("LENGTH_MISMATCH: bar columns must have equal lengths; ts_event has {expected}, open/high/low/close/volume have {:?}{}", &lengths[..lengths.len().min(5)], sequence_note(lengths))]
    LengthMismatch {
        /// Length of ts_event.
        expected: usize,
        /// Lengths of open, high, low, close and volume, then of the sequence column when one
        /// was given (one vector, not a field more: the error rides in every `Result` of the
        /// bar paths, and a larger one costs each of them).
        lengths: Vec<usize>,
    },
    /// Bars not strictly increasing by ts_event (or, fed to a feature state, not after its last
    /// bar).
    #[error("UNSORTED_BARS: bar {index} has ts_event {ts_event}, not after the previous {previous}; bars must be strictly increasing (no duplicates)")]
    Unsorted {
        /// Offending index.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
        /// The previous ts_event (a feature state's last bar for index 0).
        previous: u64,
    },
    /// A close time past the last instant bars may carry.
    #[error("INVALID_TIMESTAMP: bar {index} has ts_event {ts_event}; bar times are at most 9223372036854775807 (2^63-1 ns, the range of Arrow's timestamp[ns])")]
    TimestampOutOfRange {
        /// Offending index.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
    },
    /// Sequences that cannot be the held bars' (restoring a series).
    #[error("INVALID_SEQUENCE: {detail}")]
    InvalidSequence {
        /// What was wrong.
        detail: String,
    },
    /// A close time that is not a whole minute.
    #[error("NOT_MINUTE_ALIGNED: bar {index} has ts_event {ts_event}; a 1-minute bar closes on a whole minute (a positive multiple of 60000000000 ns)")]
    NotMinuteAligned {
        /// Offending index.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
    },
    /// High below open/close, low above them, or a negative volume.
    #[error("INCONSISTENT_BAR: bar {index} (ts_event {ts_event}) needs low <= open, close <= high and volume >= 0")]
    InconsistentBar {
        /// Offending index.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
    },
    /// A coverage span with end <= start or off the minute grid.
    #[error("INVALID_COVERAGE: span [{start}, {end}) must have start < end <= 9223372036854775807 (2^63-1 ns)")]
    InvalidSpan {
        /// Span start.
        start: u64,
        /// Span end.
        end: u64,
    },
    /// A scale outside 0..=18.
    #[error("INVALID_PRECISION: {what} precision {precision} is out of range; allowed 0..=18")]
    BadPrecision {
        /// price or size.
        what: &'static str,
        /// The value given.
        precision: i64,
    },
    /// A bucket's summed volume does not fit the fixed-point range.
    #[error("VOLUME_OVERFLOW: the volume of the bucket closing at {ts_event} does not fit a signed 64-bit mantissa")]
    VolumeOverflow {
        /// The bucket's close.
        ts_event: u64,
    },
    /// A capacity of zero.
    #[error("INVALID_CAPACITY: a series keeps at least one bar; got {capacity}")]
    BadCapacity {
        /// The value given.
        capacity: usize,
    },
}

impl BarsError {
    /// The same refusal naming bar `at` (a bar checked alone names index 0).
    #[must_use]
    pub(crate) fn at_index(mut self, at: usize) -> Self {
        match &mut self {
            Self::Unsorted { index, .. }
            | Self::TimestampOutOfRange { index, .. }
            | Self::NotMinuteAligned { index, .. }
            | Self::InconsistentBar { index, .. } => *index = at,
            _ => {}
        }
        self
    }
}

/// The sequence column's length in a length-mismatch message, when one was given.
fn sequence_note(lengths: &[usize]) -> String {
    lengths
        .get(5)
        .map_or_else(String::new, |n| format!(", sequence has {n}"))
}
