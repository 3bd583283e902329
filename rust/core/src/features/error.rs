//! Refusals of the feature kernels, each naming the offending value and what is allowed. A
//! refused bar is a [`crate::bars::BarsError`], carried by [`FeatureError::Bars`].

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
    /// A refused bar: the bars' one enum of bar refusals (lengths, order, consistency, scales,
    /// volume overflow), whether the bars kernels or the feature kernels refused it.
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
}
