//! A strict RFC 8259 parser for the text handed to `canonicalize`.
//!
//! Stricter than most parsers on purpose: floats, out-of-range integers, lone surrogates,
//! invalid UTF-8, a byte-order mark, and nesting past [`MAX_DEPTH`] are refused rather than
//! repaired, because canonical bytes feed identities and must never depend on a guess. The
//! tokens are read by [`Cursor`]; this module builds the value tree from them.

use super::cursor::{syntax, Cursor};
use super::error::{JsonError, JsonErrorKind};
use super::value::Value;
use super::MAX_DEPTH;

/// Parse JSON text into a [`Value`].
///
/// # Errors
/// A [`JsonError`] naming the path and the byte offset of the first refusal.
pub fn parse(text: &[u8]) -> Result<Value<'_>, JsonError> {
    if text.starts_with(b"\xEF\xBB\xBF") {
        return Err(syntax(
            "a UTF-8 byte-order mark is not allowed before JSON text",
        ));
    }
    let mut cursor = Cursor::new(text);
    cursor.skip_ws();
    let value = value(&mut cursor, 0)?;
    if !cursor.at_end() {
        let pos = cursor.pos();
        // Bytes that are not UTF-8 are an encoding error wherever they sit (as `unexpected`).
        if std::str::from_utf8(&text[pos..]).is_err_and(|e| e.valid_up_to() == 0) {
            return Err(JsonError::new(
                JsonErrorKind::InvalidUtf8,
                format!("invalid UTF-8 at byte {pos}"),
            ));
        }
        return Err(syntax(format!(
            "unexpected content after the document at byte {pos}"
        )));
    }
    Ok(value)
}

fn value<'a>(cursor: &mut Cursor<'a>, depth: usize) -> Result<Value<'a>, JsonError> {
    match cursor.peek() {
        Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(cursor.too_deep()),
        Some(b'{') => object(cursor, depth + 1),
        Some(b'[') => array(cursor, depth + 1),
        Some(b'"') => cursor.string().map(Value::Str),
        Some(b't') => cursor.literal("true").map(|()| Value::Bool(true)),
        Some(b'f') => cursor.literal("false").map(|()| Value::Bool(false)),
        Some(b'n') => cursor.literal("null").map(|()| Value::Null),
        Some(b'-' | b'0'..=b'9') => cursor.number().map(Value::Int),
        _ => Err(cursor.unexpected("a JSON value")),
    }
}

fn array<'a>(cursor: &mut Cursor<'a>, depth: usize) -> Result<Value<'a>, JsonError> {
    let mut items = Vec::new();
    let mut closed = cursor.open(b']');
    while !closed {
        cursor.skip_ws();
        let index = items.len();
        items.push(value(cursor, depth).map_err(|e| e.at_index(index))?);
        closed = cursor.after_item(b']', "',' or ']'")?;
    }
    Ok(Value::Array(items))
}

fn object<'a>(cursor: &mut Cursor<'a>, depth: usize) -> Result<Value<'a>, JsonError> {
    let mut members = Vec::new();
    let mut closed = cursor.open(b'}');
    while !closed {
        let key = cursor.key()?;
        let value = value(cursor, depth).map_err(|e| e.at_key(&key))?;
        members.push((key, value));
        closed = cursor.after_item(b'}', "',' or '}'")?;
    }
    Ok(Value::Object(members))
}
