//! The canonical byte writer: the layout rules of pinned decision 2, over the string escaping
//! of `string.rs`.

use super::error::{JsonError, JsonErrorKind};
use super::string::{escape_flags, half, needs_escape, short_word, word, write_string};

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

/// Copy up to 32 bytes into `dst` with at most two overlapping moves of a fixed width: a
/// `memcpy` call per short piece was a tenth of a walk.
#[inline(always)]
fn copy_short(dst: &mut [u8; 32], src: &[u8]) {
    let n = src.len();
    if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        if let Some(tail) = dst.get_mut(n - 16..n) {
            tail.copy_from_slice(&src[n - 16..]);
        }
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// The decimal digits of 0..1000 in the low three bytes (little-endian), their count in the
/// top byte.
static SMALL_INTS: [u32; 1000] = {
    let mut table = [0u32; 1000];
    let mut i = 0;
    while i < 1000 {
        let (h, t, o) = ((i / 100) as u32, (i / 10 % 10) as u32, (i % 10) as u32);
        table[i] = if i >= 100 {
            (b'0' as u32 + h) | (b'0' as u32 + t) << 8 | (b'0' as u32 + o) << 16 | 3 << 24
        } else if i >= 10 {
            (b'0' as u32 + t) | (b'0' as u32 + o) << 8 | 2 << 24
        } else {
            (b'0' as u32 + o) | 1 << 24
        };
        i += 1;
    }
    table
};

/// "00" to "99".
static DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Bytes a writer may touch past its position: short pieces are stored as whole words.
const SLACK: usize = 64;

/// An append-only canonical JSON buffer. The caller supplies structure (members already
/// sorted with [`sort_members`]); the writer supplies bytes.
///
/// The buffer is kept initialised past the write position (`buf.len() >= pos`), so short
/// pieces are stored as fixed-width words into a fixed-size window (one bounds check per
/// piece), spilling into bytes that what follows overwrites: no `memcpy` call and no per-byte
/// bookkeeping for the common pieces.
#[derive(Debug, Default)]
pub struct CanonicalWriter {
    buf: Vec<u8>,
    pos: usize,
}

impl CanonicalWriter {
    /// A writer with room for `capacity` bytes.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        // Reserved, not filled: windows initialise the buffer as they reach it.
        Self {
            buf: Vec::with_capacity(capacity + SLACK),
            pos: 0,
        }
    }

    /// Reuse an existing allocation (cleared first).
    #[must_use]
    pub fn from_vec(mut buf: Vec<u8>) -> Self {
        buf.clear();
        Self { buf, pos: 0 }
    }

    /// Forget the bytes written, keeping the allocation for the next document.
    #[inline]
    pub fn clear(&mut self) {
        self.pos = 0;
    }

    /// The write position: the number of bytes written.
    #[must_use]
    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Continue writing at `pos`, a position this writer returned (bytes before it are kept,
    /// bytes after it are dropped). Hot loops keep the position in a local and hand it back
    /// here, so it stays in a register across calls the compiler cannot see into.
    ///
    /// A position past the bytes held is never handed out; were one passed anyway, the writes
    /// would grow the buffer to reach it (zeros between), and nothing panics.
    #[inline(always)]
    pub fn at(&mut self, pos: usize) -> &mut Self {
        self.pos = pos;
        self
    }

    /// Bytes held by the allocation.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The bytes written so far.
    #[must_use]
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.pos).unwrap_or(&self.buf)
    }

    /// Give the buffer back.
    #[must_use]
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.buf.truncate(self.pos);
        self.buf
    }

    /// The position and the next `N` bytes of the buffer, grown first if needed. `None` is
    /// unreachable (growing makes room); callers fall back to a plain path rather than panic.
    ///
    /// Callers compute the new position from the returned one, never from `self.pos`: a byte
    /// stored through the buffer may alias the field as far as the compiler knows, so reading
    /// `self.pos` after writing a piece reloads it from memory, a store-to-load round trip on
    /// the critical path of every piece.
    #[inline(always)]
    fn window<const N: usize>(&mut self) -> Option<(usize, &mut [u8; N])> {
        let pos = self.pos;
        if self.buf.len().saturating_sub(pos) < N {
            // Only the buffer is lent out, so `pos` survives the call in a register.
            Self::grow(&mut self.buf, pos + N);
        }
        Some((pos, self.buf.get_mut(pos..)?.first_chunk_mut::<N>()?))
    }

    #[cold]
    #[inline(never)]
    fn grow(buf: &mut Vec<u8>, end: usize) {
        let wanted = (end + SLACK).max(buf.len() * 2).max(1024);
        buf.resize(wanted, 0);
    }

    /// Append `bytes` the plain way (long pieces, and the unreachable fallbacks).
    #[inline(never)]
    fn extend(&mut self, bytes: &[u8]) {
        // Never shrink `buf`: the bytes past the position are the slack that the short-piece
        // writes rely on, and re-growing would zero them again on every document.
        let (pos, end) = (self.pos, self.pos + bytes.len());
        if self.buf.len() < end {
            Self::grow(&mut self.buf, end);
        }
        self.buf[pos..end].copy_from_slice(bytes);
        self.pos = end;
    }

    /// A fixed-width piece (a literal, punctuation).
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, bytes: &[u8; N]) {
        if let Some((pos, w)) = self.window::<N>() {
            *w = *bytes;
            self.pos = pos + N;
        } else {
            self.extend(bytes);
        }
    }

    /// `null`
    #[inline(always)]
    pub fn null(&mut self) {
        self.put(b"null");
    }

    /// `true` or `false`
    #[inline]
    pub fn bool(&mut self, value: bool) {
        if value {
            self.put(b"true");
        } else {
            self.put(b"false");
        }
    }

    /// A signed 64-bit integer in shortest decimal form.
    #[inline(always)]
    pub fn int(&mut self, value: i64) {
        // Integers under 1000 (scales, counts, small sequences) are most of those on the wire:
        // one table load and one store, with no branch on the number of digits.
        if let Ok(small @ 0..=999) = usize::try_from(value) {
            if let Some((pos, w)) = self.window::<4>() {
                let entry = SMALL_INTS[small];
                *w = entry.to_le_bytes();
                self.pos = pos + (entry >> 24) as usize;
                return;
            }
        }
        self.large_int(value);
    }

    /// An integer of four or more digits (or negative), written in place: formatting into a
    /// scratch buffer (`itoa`) and copying out read back bytes just stored two at a time, and
    /// that store-to-load forwarding failure stalled each such integer for a dozen cycles.
    #[inline(never)]
    fn large_int(&mut self, value: i64) {
        let Some((pos, w)) = self.window::<24>() else {
            self.extend(itoa::Buffer::new().format(value).as_bytes());
            return;
        };
        let mut rest = value.unsigned_abs();
        let sign = usize::from(value < 0);
        w[0] = b'-';
        let digits = rest.checked_ilog10().unwrap_or(0) as usize + 1;
        let mut end = sign + digits;
        while rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            w[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
            end -= 2;
        }
        if rest >= 10 {
            let pair = rest as usize * 2;
            w[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            w[end - 1] = b'0' + rest as u8;
        }
        self.pos = pos + sign + digits;
    }

    /// A string with canonical escaping.
    ///
    /// Strings of up to 32 bytes (ids, decimals, timestamps, keys) are loaded as four
    /// (overlapping) words, stored, and checked from the same registers; the position only
    /// advances when nothing needed escaping, else the slow path overwrites the attempt. Within
    /// 4..=16 and 17..=32 bytes nothing branches on the exact length, which alternates on the
    /// wire (`"DECIMAL"`, `"106.0222"`).
    #[inline(always)]
    pub fn string(&mut self, value: &str) {
        let bytes = value.as_bytes();
        let n = bytes.len();
        if (4..=16).contains(&n) {
            if let Some((pos, w)) = self.window::<24>() {
                // Offsets 0, min(4, n-4), min(8, n-4), n-4 cover every byte of 4..=16.
                let (o1, o2, o3) = ((n - 4).min(4), (n - 4).min(8), n - 4);
                let (a, b) = (half(bytes, 0), half(bytes, o1));
                let (c, d) = (half(bytes, o2), half(bytes, o3));
                w[1..5].copy_from_slice(&a.to_le_bytes());
                w[1 + o1..5 + o1].copy_from_slice(&b.to_le_bytes());
                w[1 + o2..5 + o2].copy_from_slice(&c.to_le_bytes());
                w[1 + o3..5 + o3].copy_from_slice(&d.to_le_bytes());
                let flags = escape_flags(u64::from(a) | u64::from(b) << 32)
                    | escape_flags(u64::from(c) | u64::from(d) << 32);
                if flags == 0 {
                    w[0] = b'"';
                    w[n + 1] = b'"';
                    self.pos = pos + n + 2;
                    return;
                }
            }
        } else if (17..=32).contains(&n) {
            if let Some((pos, w)) = self.window::<40>() {
                let (a, b) = (word(bytes, 0), word(bytes, 8));
                let (c, d) = (word(bytes, n - 16), word(bytes, n - 8));
                w[1..9].copy_from_slice(&a.to_le_bytes());
                w[9..17].copy_from_slice(&b.to_le_bytes());
                w[n - 15..n - 7].copy_from_slice(&c.to_le_bytes());
                w[n - 7..n + 1].copy_from_slice(&d.to_le_bytes());
                if escape_flags(a) | escape_flags(b) | escape_flags(c) | escape_flags(d) == 0 {
                    w[0] = b'"';
                    w[n + 1] = b'"';
                    self.pos = pos + n + 2;
                    return;
                }
            }
        } else if n < 4 {
            if let Some((pos, w)) = self.window::<8>() {
                let x = short_word(bytes);
                // Only the string's own bytes count: the zero padding above them would flag.
                if escape_flags(x) & ((1u64 << (8 * n)) - 1) == 0 {
                    w[0] = b'"';
                    w[1..5].copy_from_slice(&x.to_le_bytes()[..4]);
                    w[n + 1] = b'"';
                    self.pos = pos + n + 2;
                    return;
                }
            }
        }
        self.long_string(value);
    }

    #[inline(never)]
    fn long_string(&mut self, value: &str) {
        let bytes = value.as_bytes();
        if needs_escape(bytes) {
            self.escaped_string(value);
            return;
        }
        self.put(b"\"");
        self.extend(bytes);
        self.put(b"\"");
    }

    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, value: &str) {
        // Escaped strings are rare (keys and values on the wire are plain): reuse the Vec
        // writer and copy.
        let mut out = Vec::with_capacity(value.len() + 8);
        write_string(&mut out, value);
        self.extend(&out);
    }

    /// An object key followed by `:`.
    #[inline(always)]
    pub fn key(&mut self, key: &str) {
        self.string(key);
        self.put(b":");
    }

    /// Bytes that are already canonical (a cached rendered key, say).
    #[inline(always)]
    pub fn raw(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        if n <= 32 {
            if let Some((pos, w)) = self.window::<32>() {
                copy_short(w, bytes);
                self.pos = pos + n;
                return;
            }
        }
        self.extend(bytes);
    }

    /// The first `len` (at most 32) of 32 bytes that are already canonical: one fixed-width
    /// copy, for pieces stored with padding (the walk's cached `,"key":` prefixes).
    #[inline(always)]
    pub fn raw_padded(&mut self, bytes: &[u8; 32], len: usize) {
        if let Some((pos, w)) = self.window::<32>() {
            *w = *bytes;
            self.pos = pos + len.min(32);
        } else {
            self.extend(&bytes[..len.min(32)]);
        }
    }

    /// `,` between members or elements.
    #[inline(always)]
    pub fn comma(&mut self) {
        self.put(b",");
    }

    /// A structural byte: one of `{ } [ ]`.
    #[inline(always)]
    pub fn punct(&mut self, byte: u8) {
        self.put(&[byte]);
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

    fn via_writer(text: &str) -> String {
        let mut w = CanonicalWriter::default();
        w.punct(b'[');
        w.string(text);
        w.comma();
        w.key(text);
        w.int(-12);
        w.punct(b']');
        String::from_utf8(w.into_bytes()).unwrap_or_default()
    }

    #[test]
    fn writer_strings_match_the_reference_at_every_length() {
        for len in 0..80 {
            let plain = "é".repeat(len / 2) + &"a".repeat(len % 2);
            let mut cases = vec!["a".repeat(len), plain];
            for pos in 0..len {
                for bad in ['\0', '\u{1f}', '"', '\\', '\n'] {
                    let mut text: Vec<char> = "b".repeat(len).chars().collect();
                    text[pos] = bad;
                    cases.push(text.into_iter().collect());
                }
            }
            for text in cases {
                let expected = format!("[{},{}:-12]", s(&text), s(&text));
                assert_eq!(via_writer(&text), expected, "{text:?}");
            }
        }
    }

    #[test]
    fn integers_match_display() {
        let mut values = vec![0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1];
        let mut power = 1i64;
        for _ in 0..19 {
            for v in [power - 1, power, power + 1] {
                values.extend([v, -v]);
            }
            power = power.saturating_mul(10);
        }
        values.extend((-1100..1100).step_by(7));
        for v in values {
            let mut w = CanonicalWriter::default();
            w.int(v);
            assert_eq!(w.as_bytes(), v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn writer_pieces() {
        let mut w = CanonicalWriter::with_capacity(0);
        w.null();
        w.bool(true);
        w.bool(false);
        let ints = [
            0,
            7,
            -7,
            10,
            99,
            100,
            999,
            1000,
            12_345,
            -100,
            1 << 40,
            i64::MIN,
            i64::MAX,
        ];
        for v in ints {
            w.int(v);
            w.comma();
        }
        let mut padded = [b' '; 32];
        padded[..4].copy_from_slice(b"\"k\":");
        w.raw_padded(&padded, 4);
        w.raw(&[b'x'; 40]);
        for n in 0..=32 {
            w.raw(&b"0123456789abcdefghijklmnopqrstuvwxyz"[..n]);
        }
        let mut expected = String::from("nulltruefalse0,7,-7,10,99,100,999,1000,12345,-100,");
        expected.push_str("1099511627776,");
        expected.push_str("-9223372036854775808,9223372036854775807,\"k\":");
        expected.push_str(&"x".repeat(40));
        for n in 0..=32 {
            expected.push_str(&"0123456789abcdefghijklmnopqrstuvwxyz"[..n]);
        }
        assert_eq!(w.as_bytes(), expected.as_bytes());
        w.clear();
        w.punct(b'{');
        assert_eq!(w.as_bytes(), b"{");
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
