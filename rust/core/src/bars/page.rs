//! Bar pages as JSON: the selection a bar query makes (time range, `after_sequence`, offset and
//! limit) and the `bars` array of a `svc.bar_envelope`, written straight from the columns.
//!
//! A page is the costly part of a bar response; writing it here (no per-bar Python object)
//! lets the HTTP layer cache the finished bytes per series revision.

use super::BarsView;

/// What a bar query selects: `ts_event` within `[start, end]` (inclusive, either open),
/// sequence above `after_sequence`, then `limit` rows from `offset`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageQuery {
    /// Lowest `ts_event` kept.
    pub start: Option<u64>,
    /// Highest `ts_event` kept.
    pub end: Option<u64>,
    /// Keep only bars with a higher sequence (repairs and late bars surface).
    pub after_sequence: Option<u64>,
    /// Matching rows skipped (the cursor's position).
    pub offset: usize,
    /// Rows written at most.
    pub limit: usize,
}

/// A written page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The JSON array of bar rows.
    pub json: Vec<u8>,
    /// Rows written.
    pub rows: usize,
    /// Whether matching rows remain after this page.
    pub more: bool,
}

/// Write the page `query` selects from `view` (sorted by `ts_event`) with prices at
/// `price_scale` and volumes at `size_scale` fractional digits. Rows are
/// `{"sequence":N,"ts_event":"N","open":"D","high":"D","low":"D","close":"D","volume":"D"}`;
/// a view without sequences writes sequence 0.
#[must_use]
pub fn write_page(view: &BarsView<'_>, query: &PageQuery, price_scale: u8, size_scale: u8) -> Page {
    let ts = view.ts_event;
    let from = query.start.map_or(0, |s| ts.partition_point(|&t| t < s));
    let to = query
        .end
        .map_or(ts.len(), |e| ts.partition_point(|&t| t <= e));
    let kept = |i: &usize| match (query.after_sequence, view.sequence) {
        (Some(after), Some(seq)) => seq[*i] > after,
        (Some(_), None) => false,
        (None, _) => true,
    };
    let mut chosen = (from..to.max(from)).filter(kept).skip(query.offset);
    let mut json = Vec::with_capacity(query.limit.min(to.saturating_sub(from)) * 128 + 2);
    json.push(b'[');
    let mut rows = 0;
    for i in chosen.by_ref().take(query.limit) {
        if rows > 0 {
            json.push(b',');
        }
        write_row(&mut json, view, i, price_scale, size_scale);
        rows += 1;
    }
    json.push(b']');
    let more = chosen.next().is_some();
    Page { json, rows, more }
}

fn write_row(out: &mut Vec<u8>, view: &BarsView<'_>, i: usize, price: u8, size: u8) {
    let ohlcv = [
        view.open[i],
        view.high[i],
        view.low[i],
        view.close[i],
        view.volume[i],
    ];
    let sequence = view.sequence.map_or(0, |s| s[i]);
    write_bar_row(out, sequence, view.ts_event[i], ohlcv, price, size);
}

/// Append one bar row, the object a page's `bars` array holds: open, high, low and close
/// mantissas at `price` fractional digits, volume at `size`.
pub fn write_bar_row(
    out: &mut Vec<u8>,
    sequence: u64,
    ts_event: u64,
    ohlcv: [i64; 5],
    price: u8,
    size: u8,
) {
    let mut ints = itoa::Buffer::new();
    out.extend_from_slice(b"{\"sequence\":");
    out.extend_from_slice(ints.format(sequence).as_bytes());
    out.extend_from_slice(b",\"ts_event\":\"");
    out.extend_from_slice(ints.format(ts_event).as_bytes());
    let [open, high, low, close, volume] = ohlcv;
    for (key, value, scale) in [
        (&b"\",\"open\":\""[..], open, price),
        (b"\",\"high\":\"", high, price),
        (b"\",\"low\":\"", low, price),
        (b"\",\"close\":\"", close, price),
        (b"\",\"volume\":\"", volume, size),
    ] {
        out.extend_from_slice(key);
        write_decimal(out, value, scale);
    }
    out.extend_from_slice(b"\"}");
}

/// Append the canonical decimal string of mantissa `raw` at `scale` (0..=18) fractional
/// digits: the same text as [`crate::Fixed`]'s `Display`.
pub fn write_decimal(out: &mut Vec<u8>, raw: i64, scale: u8) {
    let magnitude = raw.unsigned_abs();
    if raw < 0 {
        out.push(b'-');
    }
    let mut digits = itoa::Buffer::new();
    if scale == 0 {
        out.extend_from_slice(digits.format(magnitude).as_bytes());
        return;
    }
    let divisor = 10u64.pow(u32::from(scale));
    out.extend_from_slice(digits.format(magnitude / divisor).as_bytes());
    out.push(b'.');
    let fraction = digits.format(magnitude % divisor).as_bytes();
    out.resize(out.len() + usize::from(scale) - fraction.len(), b'0');
    out.extend_from_slice(fraction);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fixed;

    fn view<'a>(ts: &'a [u64], px: &'a [i64], seq: &'a [u64]) -> BarsView<'a> {
        BarsView {
            ts_event: ts,
            open: px,
            high: px,
            low: px,
            close: px,
            volume: px,
            sequence: Some(seq),
        }
    }

    #[test]
    fn decimals_match_fixed_display() {
        for raw in [0, 1, -1, 5, 12_345, -12_345, i64::MAX, i64::MIN, 100, -100] {
            for scale in 0..=18u8 {
                let mut out = Vec::new();
                write_decimal(&mut out, raw, scale);
                let expected = format_reference(raw, scale);
                let fixed = Fixed::parse(&expected, u32::from(scale)).map(|f| f.to_string());
                assert_eq!(fixed.as_deref(), Ok(expected.as_str()));
                assert_eq!(String::from_utf8_lossy(&out), expected, "{raw} at {scale}");
            }
        }
    }

    fn format_reference(raw: i64, scale: u8) -> String {
        let text = i128::from(raw).unsigned_abs().to_string();
        let sign = if raw < 0 { "-" } else { "" };
        let s = usize::from(scale);
        if s == 0 {
            return format!("{sign}{text}");
        }
        let padded = format!("{text:0>width$}", width = s + 1);
        let (int, frac) = padded.split_at(padded.len() - s);
        format!("{sign}{int}.{frac}")
    }

    #[test]
    fn selects_range_sequence_offset_and_limit() {
        let ts = [60, 120, 180, 240, 300];
        let px = [1, 2, 3, 4, 5];
        let seq = [1, 2, 7, 3, 4];
        let v = view(&ts, &px, &seq);
        let q = |start, end, after, offset, limit| PageQuery {
            start,
            end,
            after_sequence: after,
            offset,
            limit,
        };
        let page = write_page(&v, &q(Some(120), Some(240), None, 0, 10), 1, 0);
        assert_eq!(page.rows, 3);
        assert!(!page.more);
        assert!(page
            .json
            .starts_with(b"[{\"sequence\":2,\"ts_event\":\"120\",\"open\":\"0.2\""));
        let page = write_page(&v, &q(None, None, Some(3), 0, 1), 0, 0);
        assert_eq!((page.rows, page.more), (1, true));
        assert!(page.json.starts_with(b"[{\"sequence\":7,"));
        let page = write_page(&v, &q(None, None, None, 4, 1), 0, 0);
        assert_eq!((page.rows, page.more), (1, false));
        assert_eq!(
            write_page(&v, &q(Some(400), None, None, 0, 5), 0, 0).json,
            b"[]"
        );
        assert_eq!(
            write_page(&v, &q(Some(300), Some(60), None, 0, 5), 0, 0).json,
            b"[]"
        );
    }

    #[test]
    fn a_row_is_the_documented_object() {
        let v = view(&[60], &[-5], &[9]);
        let page = write_page(
            &v,
            &PageQuery {
                limit: 1,
                ..PageQuery::default()
            },
            2,
            1,
        );
        assert_eq!(
            String::from_utf8_lossy(&page.json),
            "[{\"sequence\":9,\"ts_event\":\"60\",\"open\":\"-0.05\",\"high\":\"-0.05\",\
             \"low\":\"-0.05\",\"close\":\"-0.05\",\"volume\":\"-0.5\"}]"
        );
    }
}
