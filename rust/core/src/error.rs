//! The core's typed errors. Each refusal is a variant that carries the wire SYMBOL and enough
//! context (JSON path, offending value) for a message a user can act on.

use std::fmt;

/// Why a document was refused by the canonical JSON writer or the strict parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// A float (or a JSON number with a fraction or exponent): decimals travel as strings.
    Float,
    /// An integer outside signed 64 bit.
    IntegerOutOfRange,
    /// An object key that is not a string.
    NonStringKey,
    /// The same key twice in one object.
    DuplicateKey,
    /// A UTF-16 surrogate that is not part of a pair.
    LoneSurrogate,
    /// Bytes that are not UTF-8.
    InvalidUtf8,
    /// Containers nested deeper than [`crate::json::MAX_DEPTH`].
    TooDeep,
    /// JSON text that does not parse (RFC 8259, strict).
    Syntax,
    /// A value of a type JSON has no place for.
    UnsupportedType,
}

impl JsonErrorKind {
    /// The wire symbol: the first word of the error message.
    #[must_use]
    pub const fn symbol(self) -> &'static str {
        match self {
            Self::Float => "FLOAT_REFUSED",
            Self::IntegerOutOfRange => "INTEGER_OUT_OF_RANGE",
            Self::NonStringKey => "NON_STRING_KEY",
            Self::DuplicateKey => "DUPLICATE_KEY",
            Self::LoneSurrogate => "LONE_SURROGATE",
            Self::InvalidUtf8 => "INVALID_UTF8",
            Self::TooDeep => "NESTING_TOO_DEEP",
            Self::Syntax => "INVALID_JSON",
            Self::UnsupportedType => "UNSUPPORTED_TYPE",
        }
    }
}

/// One step of a JSON path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// A refusal with the JSON path where it happened.
///
/// The path is collected while the error unwinds out of the recursion, so building it costs
/// nothing on the success path; `path` is therefore stored innermost-first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// What was wrong.
    pub kind: JsonErrorKind,
    /// Human detail: the offending value and what is allowed instead.
    pub detail: String,
    reversed_path: Vec<PathSegment>,
}

impl JsonError {
    /// A refusal at the current position; enclosing levels add their segments with [`Self::at`].
    #[must_use]
    pub fn new(kind: JsonErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            reversed_path: Vec::new(),
        }
    }

    /// Prefix the path with one enclosing segment (called while unwinding).
    #[must_use]
    pub fn at(mut self, segment: PathSegment) -> Self {
        self.reversed_path.push(segment);
        self
    }

    /// Prefix the path with an enclosing object key.
    #[must_use]
    pub fn at_key(self, key: &str) -> Self {
        self.at(PathSegment::Key(key.to_owned()))
    }

    /// Prefix the path with an enclosing array index.
    #[must_use]
    pub fn at_index(self, index: usize) -> Self {
        self.at(PathSegment::Index(index))
    }

    /// The path segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = &PathSegment> {
        self.reversed_path.iter().rev()
    }

    /// The JSON path, e.g. `$.values["rsi_14.value"][2]`.
    #[must_use]
    pub fn path(&self) -> String {
        let mut out = String::from("$");
        for segment in self.segments() {
            match segment {
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(itoa::Buffer::new().format(*i));
                    out.push(']');
                }
                PathSegment::Key(k) if is_identifier(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                PathSegment::Key(k) => {
                    let mut quoted = Vec::with_capacity(k.len() + 2);
                    crate::json::write_string(&mut quoted, k);
                    out.push('[');
                    out.push_str(&String::from_utf8_lossy(&quoted));
                    out.push(']');
                }
            }
        }
        out
    }
}

/// Keys that print as `.key` in a path; everything else prints as `["key"]`.
fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: at {}: {}",
            self.kind.symbol(),
            self.path(),
            self.detail
        )
    }
}

impl std::error::Error for JsonError {}

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
