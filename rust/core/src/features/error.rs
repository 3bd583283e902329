//! Refusals of the feature kernels, each naming the offending value and what is allowed.

/// A refused feature spec, feature selection or bar input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// A feature id not in the registry.
    #[error("UNKNOWN_FEATURE: {feature_id:?} is not in the feature registry; known: {known}")]
    UnknownFeature {
        /// The refused id.
        feature_id: String,
        /// The registered ids, comma separated.
        known: String,
    },
    /// The same feature id selected or registered twice.
    #[error("DUPLICATE_FEATURE: {feature_id:?} appears more than once; feature ids are unique")]
    DuplicateFeature {
        /// The repeated id.
        feature_id: String,
    },
    /// A feature id outside `^[a-z][a-z0-9_]{0,63}$`.
    #[error("INVALID_FEATURE_ID: {feature_id:?} is not a feature id; expected ^[a-z][a-z0-9_]{{0,63}}$ such as \"rsi_14\"")]
    InvalidFeatureId {
        /// The refused id.
        feature_id: String,
    },
    /// A parameter that is missing, unknown to the kernel, or out of its range.
    #[error("INVALID_FEATURE_PARAMETER: {feature_id}: parameter {name:?} = {value:?}: {expected}")]
    BadParameter {
        /// The feature the parameter belongs to.
        feature_id: String,
        /// The parameter name.
        name: String,
        /// The value given (`<missing>` when absent).
        value: String,
        /// What is allowed instead.
        expected: String,
    },
    /// Input columns of different lengths.
    #[error("LENGTH_MISMATCH: bar columns must have equal lengths; ts_event has {expected}, open/high/low/close/volume have {lengths:?}")]
    LengthMismatch {
        /// Length of ts_event.
        expected: usize,
        /// Lengths of the other columns.
        lengths: Vec<usize>,
    },
    /// Bars not strictly increasing by ts_event (or not after the state's last bar).
    #[error("UNSORTED_BARS: bar {index} has ts_event {ts_event}, not after the previous {previous}; bars must be strictly increasing (no duplicates)")]
    Unsorted {
        /// Offending index within the call.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
        /// The previous ts_event (the state's last bar for index 0).
        previous: u64,
    },
    /// High below open/close, low above them, or a negative volume.
    #[error("INCONSISTENT_BAR: bar {index} (ts_event {ts_event}) needs low <= open, close <= high and volume >= 0")]
    InconsistentBar {
        /// Offending index within the call.
        index: usize,
        /// Its ts_event.
        ts_event: u64,
    },
    /// A price or size scale outside `0..=18`.
    #[error("INVALID_PRECISION: {what} precision {precision} is out of range; allowed 0..=18")]
    BadPrecision {
        /// `price` or `size`.
        what: &'static str,
        /// The value given.
        precision: i64,
    },
    /// An input column of the wrong type or layout (raised by bindings).
    #[error("INVALID_COLUMN: {name} must be a contiguous 1-D array of {expected}")]
    InvalidColumn {
        /// The column name.
        name: String,
        /// The element type expected (`int64`, `uint64`).
        expected: &'static str,
    },
    /// A refusal of the bars kernels (series, folding) under a feature fold.
    #[error(transparent)]
    Bars(#[from] crate::bars::BarsError),
    /// An instrument index outside the universe.
    #[error("UNKNOWN_INSTRUMENT: instrument index {index} is not in the universe of {len}")]
    UnknownInstrument {
        /// The index given.
        index: usize,
        /// Instruments held.
        len: usize,
    },
    /// An instrument id outside the schemas' `SYMBOL.VENUE` pattern (a delta writer's).
    #[error("INVALID_FEATURE_INPUT: instrument_id {instrument_id:?} for instrument index {index} is not a canonical id; allowed: SYMBOL.VENUE (printable ASCII symbol, venue [A-Z][A-Z0-9_]*), at most 128 characters")]
    InvalidInstrumentId {
        /// The instrument index it was given for.
        index: u32,
        /// The refused id.
        instrument_id: String,
    },
    /// An instrument of the universe with no id registered with the delta writer.
    #[error("UNKNOWN_INSTRUMENT: instrument index {index} has no instrument_id registered; register every instrument of the universe before closing a minute")]
    UnregisteredInstrument {
        /// The first such index.
        index: usize,
    },
    /// An instrument index registered with a delta writer ahead of the next one.
    #[error("UNKNOWN_INSTRUMENT: instrument index {index} skips index {next}; register instrument ids in index order from 0, as the universe numbers instruments")]
    InstrumentIndexGap {
        /// The index given.
        index: u32,
        /// The next index not yet registered.
        next: usize,
    },
    /// A scalar bar field outside its machine range (raised by bindings).
    #[error("INVALID_BAR: {name} = {value} is out of range; expected {expected}")]
    BarValueOutOfRange {
        /// The field name.
        name: &'static str,
        /// The value given.
        value: String,
        /// The range expected (`uint64`, `int64`).
        expected: &'static str,
    },
}
