//! The core's typed errors. Each refusal is a variant that carries the wire SYMBOL and enough
//! context (JSON path, offending value) for a message a user can act on.
//!
//! The JSON refusals live beside the JSON code (`json/error.rs`), which this module does not
//! reach into otherwise; they are re-exported here so every error type has one address.

pub use crate::json::{JsonError, JsonErrorKind, PathSegment};

/// A decimal string refused by [`crate::decimal`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    /// Not of the form `^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`.
    #[error("INVALID_DECIMAL: {value:?} is not a decimal string; expected -?(0|[1-9][0-9]*)(.[0-9]+)? with no exponent")]
    Syntax {
        /// The offending text.
        value: String,
    },
    /// A negative zero such as `-0` or `-0.00`.
    #[error("INVALID_DECIMAL: {value:?} is a negative zero; write zero without a sign")]
    NegativeZero {
        /// The offending text.
        value: String,
    },
    /// More fractional digits than the declared scale (never rounded silently).
    #[error("DECIMAL_SCALE_EXCEEDED: {value:?} has {digits} fractional digits; the declared scale allows at most {scale}")]
    ScaleExceeded {
        /// The offending text.
        value: String,
        /// Fractional digits found.
        digits: usize,
        /// The declared scale.
        scale: u8,
    },
    /// A scale above [`crate::decimal::MAX_SCALE`].
    #[error("INVALID_SCALE: scale {scale} is out of range; allowed 0..={max}")]
    BadScale {
        /// The requested scale, as given (it may not fit any machine integer).
        scale: String,
        /// The largest scale supported.
        max: u8,
    },
    /// The value does not fit the fixed-point range (signed 128 bit at the scale).
    #[error("DECIMAL_OUT_OF_RANGE: {value:?} does not fit the fixed-point range at scale {scale}")]
    OutOfRange {
        /// The offending text (or a description of the computation).
        value: String,
        /// The scale in use.
        scale: u8,
    },
}

/// A nanosecond timestamp string refused by [`crate::time`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimestampError {
    /// Not of the form `^(0|[1-9][0-9]*)$`.
    #[error("INVALID_TIMESTAMP: {value:?} is not a nanosecond timestamp; expected digits without sign, point or leading zero")]
    Syntax {
        /// The offending text.
        value: String,
    },
    /// Larger than the unsigned 64-bit nanosecond range.
    #[error("INVALID_TIMESTAMP: {value:?} exceeds the largest nanosecond timestamp 18446744073709551615")]
    OutOfRange {
        /// The offending text.
        value: String,
    },
}
