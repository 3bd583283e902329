//! A strict RFC 8259 parser for the text handed to `canonicalize`.
//!
//! Stricter than most parsers on purpose: floats, out-of-range integers, lone surrogates,
//! invalid UTF-8, a byte-order mark, and nesting past [`MAX_DEPTH`] are refused rather than
//! repaired, because canonical bytes feed identities and must never depend on a guess.

use std::borrow::Cow;

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
    let mut parser = Parser {
        bytes: text,
        pos: 0,
    };
    parser.skip_ws();
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != text.len() {
        // Bytes that are not UTF-8 are an encoding error wherever they sit (as `unexpected`).
        if std::str::from_utf8(&text[parser.pos..]).is_err_and(|e| e.valid_up_to() == 0) {
            return Err(JsonError::new(
                JsonErrorKind::InvalidUtf8,
                format!("invalid UTF-8 at byte {}", parser.pos),
            ));
        }
        return Err(syntax(format!(
            "unexpected content after the document at byte {}",
            parser.pos
        )));
    }
    Ok(value)
}

fn syntax(detail: impl Into<String>) -> JsonError {
    JsonError::new(JsonErrorKind::Syntax, detail)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn unexpected(&self, expected: &str) -> JsonError {
        // A byte that starts no valid UTF-8 sequence is an encoding error before it is a
        // syntax error (text in another encoding, or corrupted bytes).
        if let Err(e) = std::str::from_utf8(&self.bytes[self.pos..]) {
            if e.valid_up_to() == 0 {
                return JsonError::new(
                    JsonErrorKind::InvalidUtf8,
                    format!("invalid UTF-8 at byte {}", self.pos),
                );
            }
        }
        match self.peek() {
            None => syntax(format!("unexpected end of input; expected {expected}")),
            Some(b) if b.is_ascii_graphic() => syntax(format!(
                "unexpected {:?} at byte {}; expected {expected}",
                b as char, self.pos
            )),
            Some(b) => syntax(format!(
                "unexpected byte 0x{b:02x} at byte {}; expected {expected}",
                self.pos
            )),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        match self.peek() {
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(JsonError::new(
                JsonErrorKind::TooDeep,
                format!(
                    "containers nest deeper than {MAX_DEPTH} levels at byte {}",
                    self.pos
                ),
            )),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::Str),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, value: Value<'a>) -> Result<Value<'a>, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Step past a container's opening byte and the whitespace after it; whether `close`
    /// follows at once (then stepped past too), i.e. the container is empty.
    fn open(&mut self, close: u8) -> bool {
        self.pos += 1;
        self.skip_ws();
        let empty = self.peek() == Some(close);
        if empty {
            self.pos += 1;
        }
        empty
    }

    /// After a container's item: step past `,` (false: an item follows) or `close` (true: the
    /// container ends); anything else is a syntax error expecting `expected`.
    fn after_item(&mut self, close: u8, expected: &str) -> Result<bool, JsonError> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(byte) if byte == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        let mut items = Vec::new();
        let mut closed = self.open(b']');
        while !closed {
            self.skip_ws();
            let index = items.len();
            items.push(self.value(depth).map_err(|e| e.at_index(index))?);
            closed = self.after_item(b']', "',' or ']'")?;
        }
        Ok(Value::Array(items))
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        let mut members = Vec::new();
        let mut closed = self.open(b'}');
        while !closed {
            self.skip_ws();
            match self.peek() {
                Some(b'"') => {}
                Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'[' | b'{') => {
                    return Err(JsonError::new(
                        JsonErrorKind::NonStringKey,
                        format!(
                            "object key at byte {} is not a string; keys must be strings",
                            self.pos
                        ),
                    ));
                }
                _ => return Err(self.unexpected("a string key")),
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.unexpected("':'").at_key(&key));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth).map_err(|e| e.at_key(&key))?;
            members.push((key, value));
            closed = self.after_item(b'}', "',' or '}'")?;
        }
        Ok(Value::Object(members))
    }

    fn number(&mut self) -> Result<Value<'a>, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(syntax(format!("number at byte {start} has a leading zero")));
                }
            }
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.unexpected("a digit")),
        }
        let int_end = self.pos;
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.require_digit()?;
            is_float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.require_digit()?;
            is_float = true;
        }
        let text = || String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
        if is_float {
            return Err(JsonError::new(
                JsonErrorKind::Float,
                format!("number {} has a fraction or exponent; floats are refused, send decimals as strings", text()),
            ));
        }
        let negative = self.bytes[start] == b'-';
        let digits = &self.bytes[start + usize::from(negative)..int_end];
        // Accumulate toward the sign so i64::MIN parses without overflow.
        let mut value: i64 = 0;
        for &digit in digits {
            let d = i64::from(digit - b'0');
            let next = value.checked_mul(10).and_then(|v| {
                if negative {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            });
            match next {
                Some(v) => value = v,
                None => {
                    return Err(JsonError::new(
                        JsonErrorKind::IntegerOutOfRange,
                        format!(
                            "integer {} is outside signed 64 bit [-9223372036854775808, 9223372036854775807]",
                            text()
                        ),
                    ))
                }
            }
        }
        Ok(Value::Int(value))
    }

    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn require_digit(&mut self) -> Result<(), JsonError> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.unexpected("a digit"));
        }
        self.skip_digits();
        Ok(())
    }

    /// A string token; `self.pos` is on the opening quote. Strings without escapes (nearly
    /// all of them) are borrowed from the input rather than copied.
    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.pos += 1;
        let mut out: Option<String> = None;
        loop {
            let run_start = self.pos;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.pos += 1;
            }
            let bytes: &'a [u8] = self.bytes;
            let run = std::str::from_utf8(&bytes[run_start..self.pos]).map_err(|e| {
                let at = run_start + e.valid_up_to();
                JsonError::new(
                    JsonErrorKind::InvalidUtf8,
                    format!("invalid UTF-8 at byte {at}"),
                )
            })?;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(run),
                        Some(mut owned) => {
                            owned.push_str(run);
                            Cow::Owned(owned)
                        }
                    });
                }
                Some(b'\\') => {
                    let owned = out.get_or_insert_with(String::new);
                    owned.push_str(run);
                    self.escape(owned)?;
                }
                Some(b) => {
                    return Err(syntax(format!(
                        "unescaped control character U+{b:04X} in a string at byte {}; escape it",
                        self.pos
                    )))
                }
                None => return Err(syntax("unterminated string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let at = self.pos;
        self.pos += 1;
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                out.push(self.unicode_escape(at)?);
                return Ok(());
            }
            _ => return Err(self.unexpected("an escape (one of \" \\ / b f n r t u)")),
        };
        self.pos += 1;
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| syntax("truncated \\u escape"))?;
        let text =
            std::str::from_utf8(digits).map_err(|_| syntax("\\u escape needs four hex digits"))?;
        let unit = u32::from_str_radix(text, 16)
            .ok()
            .filter(|_| text.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                syntax(format!(
                    "\\u escape at byte {} needs four hex digits",
                    self.pos - 2
                ))
            })?;
        self.pos += 4;
        Ok(unit)
    }

    /// After `\u`: one scalar value, joining a surrogate pair; a lone surrogate is refused.
    fn unicode_escape(&mut self, at: usize) -> Result<char, JsonError> {
        let lone = |unit: u32| {
            JsonError::new(
                JsonErrorKind::LoneSurrogate,
                format!("lone surrogate \\u{unit:04x} at byte {at}"),
            )
        };
        let unit = self.hex4()?;
        let scalar = match unit {
            0xD800..=0xDBFF => {
                if !self.bytes[self.pos..].starts_with(b"\\u") {
                    return Err(lone(unit));
                }
                let saved = self.pos;
                self.pos += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    self.pos = saved;
                    return Err(lone(unit));
                }
                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(lone(unit)),
            _ => unit,
        };
        char::from_u32(scalar).ok_or_else(|| lone(unit))
    }
}
