//! The canonical byte writer: the escaping and layout rules of pinned decision 2.

use crate::error::{JsonError, JsonErrorKind};

/// Escape class per byte: 0 = emit raw, otherwise the byte after the backslash (`u` = \u00xx).
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a canonical JSON string: only `"`, `\` and C0 controls are escaped;
/// everything else (non-ASCII, `/`, U+007F, U+2028, U+2029) is written raw as UTF-8.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[byte as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        if escape == b'u' {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(byte >> 4) as usize], HEX[(byte & 0xf) as usize]]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Sort object members by key in code-point order (= UTF-8 byte order) and refuse duplicates.
///
/// # Errors
/// [`JsonErrorKind::DuplicateKey`] at the duplicated key.
pub fn sort_members<T>(members: &mut [T], key: impl Fn(&T) -> &str) -> Result<(), JsonError> {
    if members.len() < 2 {
        return Ok(());
    }
    members.sort_unstable_by(|a, b| key(a).as_bytes().cmp(key(b).as_bytes()));
    for pair in members.windows(2) {
        if key(&pair[0]) == key(&pair[1]) {
            let k = key(&pair[0]);
            return Err(JsonError::new(JsonErrorKind::DuplicateKey, format!("key {k:?} appears more than once in this object; keys must be unique")).at_key(k));
        }
    }
    Ok(())
}

/// An append-only canonical JSON buffer. The caller supplies structure (members already
/// sorted with [`sort_members`]); the writer supplies bytes.
#[derive(Debug, Default)]
pub struct CanonicalWriter {
    buf: Vec<u8>,
}

impl CanonicalWriter {
    /// A writer with room for `capacity` bytes.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self { buf: Vec::with_capacity(capacity) }
    }

    /// Reuse an existing allocation (cleared first).
    #[must_use]
    pub fn from_vec(mut buf: Vec<u8>) -> Self {
        buf.clear();
        Self { buf }
    }

    /// The bytes written so far.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Give the buffer back.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// `null`
    pub fn null(&mut self) {
        self.buf.extend_from_slice(b"null");
    }

    /// `true` or `false`
    pub fn bool(&mut self, value: bool) {
        self.buf.extend_from_slice(if value { b"true" } else { b"false" });
    }

    /// A signed 64-bit integer in shortest decimal form.
    pub fn int(&mut self, value: i64) {
        self.buf.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    /// A string with canonical escaping.
    pub fn string(&mut self, value: &str) {
        write_string(&mut self.buf, value);
    }

    /// An object key followed by `:`.
    pub fn key(&mut self, key: &str) {
        write_string(&mut self.buf, key);
        self.buf.push(b':');
    }

    /// `,` between members or elements.
    pub fn comma(&mut self) {
        self.buf.push(b',');
    }

    /// A structural byte: one of `{ } [ ]`.
    pub fn punct(&mut self, byte: u8) {
        self.buf.push(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        let mut out = Vec::new();
        write_string(&mut out, text);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn escapes_only_quote_backslash_and_controls() {
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(s("\u{0}\u{1f}\u{b}"), r#""\u0000\u001f\u000b""#);
        assert_eq!(s("/\u{7f}\u{2028}\u{2029}é😀"), "\"/\u{7f}\u{2028}\u{2029}é😀\"");
    }

    #[test]
    fn sorts_by_code_point_not_utf16() {
        // U+FF61 sorts before U+1F600 by code point, after it by UTF-16 unit.
        let mut keys = vec!["\u{1F600}", "\u{FF61}", "a"];
        assert!(sort_members(&mut keys, |k| k).is_ok());
        assert_eq!(keys, vec!["a", "\u{FF61}", "\u{1F600}"]);
    }

    #[test]
    fn refuses_duplicates() {
        let mut keys = vec!["b", "a", "b"];
        let err = sort_members(&mut keys, |k| k).err();
        assert_eq!(err.map(|e| (e.kind, e.path())), Some((JsonErrorKind::DuplicateKey, "$.b".to_owned())));
    }
}
