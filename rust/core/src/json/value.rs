//! The value tree produced by the strict parser, and its canonical serialisation.

use std::borrow::Cow;

use super::error::JsonError;
use super::writer::{sort_members, CanonicalWriter};

/// A parsed JSON value. Numbers are integers only: the parser refuses everything else.
/// Strings borrow from the parsed text unless they held escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A signed 64-bit integer.
    Int(i64),
    /// A string (valid Unicode scalar values only).
    Str(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object, members in document order (duplicates still present until written).
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl Value<'_> {
    /// Write this value canonically.
    ///
    /// # Errors
    /// [`crate::JsonErrorKind::DuplicateKey`] when an object repeats a key.
    pub fn write_canonical(&self, out: &mut CanonicalWriter) -> Result<(), JsonError> {
        match self {
            Self::Null => out.null(),
            Self::Bool(b) => out.bool(*b),
            Self::Int(i) => out.int(*i),
            Self::Str(s) => out.string(s),
            Self::Array(items) => {
                out.punct(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.comma();
                    }
                    item.write_canonical(out).map_err(|e| e.at_index(i))?;
                }
                out.punct(b']');
            }
            Self::Object(members) => {
                let mut sorted: Vec<&(Cow<'_, str>, Value<'_>)> = members.iter().collect();
                sort_members(&mut sorted, |m| &m.0)?;
                out.punct(b'{');
                for (i, (key, value)) in sorted.into_iter().enumerate() {
                    if i > 0 {
                        out.comma();
                    }
                    out.key(key);
                    value.write_canonical(out).map_err(|e| e.at_key(key))?;
                }
                out.punct(b'}');
            }
        }
        Ok(())
    }
}
