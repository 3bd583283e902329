//! Canonical JSON (pinned decision 2): the writer, the strict parser for JSON text (and the
//! cursor it reads tokens with), and the small value tree the parser produces.

mod cursor;
mod error;
mod parser;
mod string;
mod value;
mod writer;

pub use cursor::Cursor;
pub use error::{JsonError, JsonErrorKind, PathSegment};
pub use parser::parse;
pub use string::write_string;
pub use value::Value;
pub use writer::{compare_keys, sort_members, CanonicalWriter};

/// Deepest nesting of arrays and objects accepted (the root container is depth 1).
///
/// Spine's own documents nest fewer than 10 levels; 128 leaves room for user configs while
/// keeping every recursive walk far from the stack limit.
pub const MAX_DEPTH: usize = 128;

/// Canonicalise JSON text: parse it strictly, then write it canonically.
///
/// # Errors
/// Any refusal of pinned decision 2 (float, out-of-range integer, duplicate key, lone
/// surrogate, invalid UTF-8, nesting deeper than [`MAX_DEPTH`]) or a syntax error, as a
/// [`JsonError`] naming the JSON path.
pub fn canonicalize(text: &[u8]) -> Result<Vec<u8>, JsonError> {
    let value = parse(text)?;
    let mut writer = CanonicalWriter::with_capacity(text.len());
    value.write_canonical(&mut writer)?;
    Ok(writer.into_bytes())
}
