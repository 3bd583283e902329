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
    if !needs_escape(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[byte as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        if escape == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(byte >> 4) as usize],
                HEX[(byte & 0xf) as usize],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any byte needs escaping (`"`, `\\` or below 0x20).
///
/// Most strings on the wire (ids, decimals, timestamps) need none and are copied whole, so this
/// check is the hot path: it tests eight bytes per step with word arithmetic (SWAR).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let word_needs = |x: u64| {
        let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
        (below_space
            | has_zero(x ^ (ONES * u64::from(b'"')))
            | has_zero(x ^ (ONES * u64::from(b'\\'))))
            != 0
    };
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if word_needs(u64::from_le_bytes(word)) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| ESCAPE[b as usize] != 0)
}

/// Compare keys by UTF-8 bytes (= code point order), eight bytes at a time: keys on the wire
/// share long prefixes (`feat_01_...`), and a libc `memcmp` call per comparison dominated
/// sorting small objects.
#[must_use]
pub fn compare_keys(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (mut a_chunks, mut b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut a_chunks).zip(&mut b_chunks) {
        let (mut wx, mut wy) = ([0u8; 8], [0u8; 8]);
        wx.copy_from_slice(x);
        wy.copy_from_slice(y);
        let (x, y) = (u64::from_be_bytes(wx), u64::from_be_bytes(wy));
        if x != y {
            return x.cmp(&y);
        }
    }
    let done = a.len().min(b.len()) / 8 * 8;
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Sort object members by key in code-point order (= UTF-8 byte order) and refuse duplicates.
///
/// # Errors
/// [`JsonErrorKind::DuplicateKey`] at the duplicated key.
pub fn sort_members<T>(members: &mut [T], key: impl Fn(&T) -> &str) -> Result<(), JsonError> {
    let less = |a: &T, b: &T| compare_keys(key(a).as_bytes(), key(b).as_bytes()).is_lt();
    // Documents are often built in key order already: one pass proves order and uniqueness.
    if members.windows(2).all(|pair| less(&pair[0], &pair[1])) {
        return Ok(());
    }
    members.sort_unstable_by(|a, b| compare_keys(key(a).as_bytes(), key(b).as_bytes()));
    for pair in members.windows(2) {
        if compare_keys(key(&pair[0]).as_bytes(), key(&pair[1]).as_bytes()).is_eq() {
            let k = key(&pair[0]);
            return Err(JsonError::new(
                JsonErrorKind::DuplicateKey,
                format!("key {k:?} appears more than once in this object; keys must be unique"),
            )
            .at_key(k));
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
        Self {
            buf: Vec::with_capacity(capacity),
        }
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
        self.buf
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    /// A signed 64-bit integer in shortest decimal form.
    pub fn int(&mut self, value: i64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
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

    /// Bytes that are already canonical (a cached rendered key, say).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
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
        assert_eq!(
            s("/\u{7f}\u{2028}\u{2029}é😀"),
            "\"/\u{7f}\u{2028}\u{2029}é😀\""
        );
    }

    #[test]
    fn sorts_by_code_point_not_utf16() {
        // U+FF61 sorts before U+1F600 by code point, after it by UTF-16 unit.
        let mut keys = vec!["\u{1F600}", "\u{FF61}", "a"];
        assert!(sort_members(&mut keys, |k| k).is_ok());
        assert_eq!(keys, vec!["a", "\u{FF61}", "\u{1F600}"]);
    }

    #[test]
    fn escape_check_sees_every_position() {
        for len in 0..20 {
            for pos in 0..len {
                for bad in [0u8, 0x1f, b'"', b'\\'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[pos] = bad;
                    assert!(needs_escape(&bytes), "len {len} pos {pos} byte {bad}");
                }
            }
            assert!(!needs_escape(&vec![b' '; len]));
            assert!(!needs_escape("é😀/\u{7f}".repeat(len).as_bytes()));
        }
    }

    #[test]
    fn compare_keys_is_byte_order() {
        let keys = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefghi",
            "abcdefgi",
            "b",
            "\u{7f}",
            "é",
            "\u{ff61}",
            "😀",
        ];
        for x in keys {
            for y in keys {
                assert_eq!(
                    compare_keys(x.as_bytes(), y.as_bytes()),
                    x.as_bytes().cmp(y.as_bytes()),
                    "{x:?} {y:?}"
                );
            }
        }
    }

    #[test]
    fn refuses_duplicates() {
        let mut keys = vec!["b", "a", "b"];
        let err = sort_members(&mut keys, |k| k).err();
        assert_eq!(
            err.map(|e| (e.kind, e.path())),
            Some((JsonErrorKind::DuplicateKey, "$.b".to_owned()))
        );
    }
}
