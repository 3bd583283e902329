//! The strict tokenizer under the parser: a cursor over JSON text that reads one token at a
//! time (strings decoded, integers as `i64`), and steps over a whole value, checking it as
//! strictly as [`super::parse`] would, without building it. A reader that wants a few members
//! of a large document (a stream event's bars beside its coverage) takes those and skips the
//! rest.

use std::borrow::Cow;

use super::error::{JsonError, JsonErrorKind};
use super::string::plain_len;
use super::MAX_DEPTH;

pub(super) fn syntax(detail: impl Into<String>) -> JsonError {
    JsonError::new(JsonErrorKind::Syntax, detail)
}

/// A position in JSON text (see the module docs).
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    /// The text as a `str` when it is known to be UTF-8 (strings are then not checked one by
    /// one).
    text: Option<&'a str>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            text: None,
            pos: 0,
        }
    }

    /// A cursor at the start of `text` (checked UTF-8 already, so strings are not again).
    #[must_use]
    pub fn on_str(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            text: Some(text),
            pos: 0,
        }
    }

    /// The byte offset of the cursor.
    #[must_use]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The text from the cursor on (a cursor there, to read a value again).
    #[must_use]
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.bytes.len()
    }

    /// The byte at the cursor.
    #[must_use]
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Step past whitespace.
    pub fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// A syntax (or encoding) error at the cursor, saying what was `expected`.
    pub(super) fn unexpected(&self, expected: &str) -> JsonError {
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

    /// Step past a container's opening byte and the whitespace after it; whether `close`
    /// follows at once (then stepped past too), i.e. the container is empty.
    pub fn open(&mut self, close: u8) -> bool {
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
    pub fn after_item(&mut self, close: u8, expected: &str) -> Result<bool, JsonError> {
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

    /// Step past `word` (`true`, `false`, `null`) at the cursor.
    ///
    /// # Errors
    /// A syntax error when another token is there.
    pub fn literal(&mut self, word: &str) -> Result<(), JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Step over the value at the cursor (`depth`: the containers it sits in), checked as
    /// [`super::parse`] checks it, building nothing.
    ///
    /// # Errors
    /// The refusal [`super::parse`] would give.
    pub fn skip_value(&mut self, depth: usize) -> Result<(), JsonError> {
        match self.peek() {
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(self.too_deep()),
            Some(b'{') => self.skip_object(depth + 1),
            Some(b'[') => self.skip_array(depth + 1),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    pub(super) fn too_deep(&self) -> JsonError {
        JsonError::new(
            JsonErrorKind::TooDeep,
            format!(
                "containers nest deeper than {MAX_DEPTH} levels at byte {}",
                self.pos
            ),
        )
    }

    fn skip_array(&mut self, depth: usize) -> Result<(), JsonError> {
        let mut closed = self.open(b']');
        while !closed {
            self.skip_ws();
            self.skip_value(depth)?;
            closed = self.after_item(b']', "',' or ']'")?;
        }
        Ok(())
    }

    fn skip_object(&mut self, depth: usize) -> Result<(), JsonError> {
        let mut closed = self.open(b'}');
        while !closed {
            self.key()?;
            self.skip_value(depth)?;
            closed = self.after_item(b'}', "',' or '}'")?;
        }
        Ok(())
    }

    /// An object member's key and the `:` after it (whitespace around skipped); the cursor
    /// is then on the member's value.
    ///
    /// # Errors
    /// [`JsonErrorKind::NonStringKey`], or a syntax error.
    pub fn key(&mut self) -> Result<Cow<'a, str>, JsonError> {
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
        Ok(key)
    }

    /// An integer token (floats and integers outside `i64` refused).
    ///
    /// # Errors
    /// A syntax error, [`JsonErrorKind::Float`] or [`JsonErrorKind::IntegerOutOfRange`].
    pub fn number(&mut self) -> Result<i64, JsonError> {
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
        Ok(value)
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
    ///
    /// # Errors
    /// A syntax error, invalid UTF-8 or a lone surrogate.
    pub fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.pos += 1;
        let mut out: Option<String> = None;
        loop {
            let run_start = self.pos;
            self.pos += plain_len(&self.bytes[run_start..]);
            let run = self.run(run_start)?;
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

    /// The string characters from `start` to the cursor, checked as UTF-8 unless the whole
    /// text was (the run ends on an ASCII byte, so it never cuts a character).
    fn run(&self, start: usize) -> Result<&'a str, JsonError> {
        let invalid = |at: usize| {
            JsonError::new(
                JsonErrorKind::InvalidUtf8,
                format!("invalid UTF-8 at byte {at}"),
            )
        };
        if let Some(text) = self.text {
            return text.get(start..self.pos).ok_or_else(|| invalid(start));
        }
        let bytes: &'a [u8] = self.bytes;
        std::str::from_utf8(&bytes[start..self.pos]).map_err(|e| invalid(start + e.valid_up_to()))
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
