//! The refusals of the canonical JSON writer and the strict parser, each with the JSON path
//! where it happened.

use std::fmt;

use super::string::write_string;

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
    /// Containers nested deeper than [`super::MAX_DEPTH`].
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
                    write_string(&mut quoted, k);
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
