//! JSON string escaping (pinned decision 2): only `"`, `\` and C0 controls are escaped, and
//! the word-at-a-time checks that let plain strings be copied whole (and read whole: the
//! cursor finds where a string's plain run ends with them).

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

/// How many bytes from the start need no escaping: the length of a run of plain string
/// characters, up to a `"`, `\\` or control byte (or the end), eight bytes per step.
pub(super) fn plain_len(bytes: &[u8]) -> usize {
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let flags = escape_flags(word(bytes, at));
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| ESCAPE[b as usize] != 0)
        .unwrap_or(bytes.len() - at)
}

/// Whether any byte needs escaping (`"`, `\\` or below 0x20).
///
/// Most strings on the wire (ids, decimals, timestamps) need none and are copied whole, so this
/// check is the hot path: it tests eight bytes per step with word arithmetic (SWAR).
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if escape_flags(u64::from_le_bytes(w)) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| ESCAPE[b as usize] != 0)
}

/// Flags the bytes of `x` that need escaping (`"`, `\\` or below 0x20): the high bit of each
/// such byte is set. Exact for the lowest flagged byte; bytes above a flagged one may be
/// flagged spuriously (a borrow), which only matters to callers that mask, and they mask high
/// bytes off.
#[inline]
pub(super) fn escape_flags(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
    below_space | has_zero(x ^ (ONES * u64::from(b'"'))) | has_zero(x ^ (ONES * u64::from(b'\\')))
}

#[inline]
pub(super) fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
pub(super) fn half(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Fewer than eight bytes as one little-endian word, zero above them; overlapping loads rather
/// than a byte loop (the bytes read twice are equal, so OR-ing them is harmless).
#[inline]
pub(super) fn short_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    if n >= 4 {
        let mut lo = [0u8; 4];
        let mut hi = [0u8; 4];
        lo.copy_from_slice(&bytes[..4]);
        hi.copy_from_slice(&bytes[n - 4..n]);
        u64::from(u32::from_le_bytes(lo)) | u64::from(u32::from_le_bytes(hi)) << (8 * (n - 4))
    } else if n > 0 {
        u64::from(bytes[0])
            | u64::from(bytes[n / 2]) << (8 * (n / 2))
            | u64::from(bytes[n - 1]) << (8 * (n - 1))
    } else {
        0
    }
}
