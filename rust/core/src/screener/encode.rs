//! The bytes of one `svc.feature_row_delta` document, written straight into a shared buffer
//! in canonical JSON (sorted keys, no whitespace; see `crate::json`): the bytes
//! `canonical_json` gives for the document's dict, values as `FeatureUniverse.row` serves
//! them (`{"kind":"DECIMAL","scale":4,"value":"54.1234"}`, INTEGER and UNIX_NANOS values as
//! strings, ABSENT with its reason and, for WARMING_UP only, `bars_needed` / `bars_seen`).
//!
//! The member names are constant, so each document is literals and numbers: a key's
//! operation prefix is rendered once per key (see [`KeyPieces`]).

use crate::bars::Resolution;
use crate::decimal::Fixed;
use crate::features::{AbsentReason, FeatureValue};
use crate::head::{Head, FEATURE_ROW_DELTA};
use crate::json::CanonicalWriter;

/// One key's operation pieces, rendered once: `{"key":"<k>","op":"UPSERT","value":` and
/// `{"key":"<k>","op":"RETIRE"}`.
#[derive(Debug, Clone)]
pub(super) struct KeyPieces {
    pub(super) upsert: Box<[u8]>,
    pub(super) retire: Box<[u8]>,
}

impl KeyPieces {
    pub(super) fn new(key: &str) -> Self {
        let mut w = CanonicalWriter::with_capacity(96);
        w.raw(b"{\"key\":");
        w.string(key);
        let stem = w.pos();
        w.raw(b",\"op\":\"UPSERT\",\"value\":");
        let upsert = w.as_bytes().into();
        w.at(stem).raw(b",\"op\":\"RETIRE\"}");
        Self {
            upsert,
            retire: w.as_bytes().into(),
        }
    }
}

/// The document's members before the operations: `{"instrument_id":<id>,"operations":[`
/// (the id rendered as a canonical JSON string once, when registered).
pub(super) fn head(instrument_id: &str) -> Box<[u8]> {
    let mut w = CanonicalWriter::with_capacity(160);
    w.raw(b"{\"instrument_id\":");
    w.string(instrument_id);
    w.raw(b",\"operations\":[");
    w.as_bytes().into()
}

/// The members after the operations: `],"resolution":..,"ts_event":"<ns>","version":..}`.
pub(super) fn tail(w: &mut CanonicalWriter, resolution: Resolution, ts_event: u64) {
    w.raw(b"],\"resolution\":");
    w.string(resolution.name());
    FEATURE_ROW_DELTA.write_schema(w);
    w.raw(b",\"ts_event\":");
    quoted(w, itoa::Buffer::new().format(ts_event));
    Head::write_version(w);
    w.raw(b"}");
}

/// `"<digits>"`: a number as a string member (no escaping needed).
fn quoted(w: &mut CanonicalWriter, digits: &str) {
    w.raw(b"\"");
    w.raw(digits.as_bytes());
    w.raw(b"\"");
}

/// The members `"key":value` of a values object, comma separated, each value written by
/// `value` (this module's canonical form, or a live frame's wire form).
pub(super) fn members<K: AsRef<str>>(
    w: &mut CanonicalWriter,
    members: impl IntoIterator<Item = (K, FeatureValue)>,
    value: fn(&mut CanonicalWriter, FeatureValue),
) {
    for (k, (key, v)) in members.into_iter().enumerate() {
        if k > 0 {
            w.comma();
        }
        w.string(key.as_ref());
        w.raw(b":");
        value(w, v);
    }
}

/// One value, as `FeatureUniverse.row` serves it.
pub(super) fn value(w: &mut CanonicalWriter, value: FeatureValue) {
    match value {
        FeatureValue::Decimal(d) => {
            w.raw(b"{\"kind\":\"DECIMAL\",\"scale\":");
            w.int(i64::from(d.scale));
            w.raw(b",\"value\":");
            decimal(w, d);
            w.raw(b"}");
        }
        FeatureValue::Integer(i) => {
            w.raw(b"{\"kind\":\"INTEGER\",\"value\":");
            quoted(w, itoa::Buffer::new().format(i));
            w.raw(b"}");
        }
        FeatureValue::UnixNanos(ns) => {
            w.raw(b"{\"kind\":\"UNIX_NANOS\",\"value\":");
            quoted(w, itoa::Buffer::new().format(ns));
            w.raw(b"}");
        }
        FeatureValue::Absent(AbsentReason::WarmingUp {
            bars_seen,
            bars_needed,
        }) => {
            w.raw(b"{\"bars_needed\":");
            w.raw(itoa::Buffer::new().format(bars_needed).as_bytes());
            w.raw(b",\"bars_seen\":");
            w.raw(itoa::Buffer::new().format(bars_seen).as_bytes());
            w.raw(b",\"kind\":\"ABSENT\",\"reason\":\"WARMING_UP\"}");
        }
        FeatureValue::Absent(reason) => {
            w.raw(b"{\"kind\":\"ABSENT\",\"reason\":");
            w.string(reason.symbol());
            w.raw(b"}");
        }
    }
}

/// A decimal's canonical string (as [`Fixed`]'s `Display`: exactly `scale` fractional
/// digits, no sign on zero), quoted, formatted on the stack. Mantissas within `u64` (every
/// feature value in practice) take 64-bit arithmetic: an `i128` division is a library call.
fn decimal(w: &mut CanonicalWriter, d: Fixed) {
    // Sign, 39 integer digits of an i128, the point, 18 fractional digits, two quotes.
    let mut buf = [0u8; 64];
    let scale = usize::from(d.scale.min(crate::decimal::MAX_SCALE));
    let magnitude = d.raw.unsigned_abs();
    let mut end = buf.len() - 1;
    buf[end] = b'"';
    let integer = if let Ok(mut small) = u64::try_from(magnitude) {
        for _ in 0..scale {
            end -= 1;
            buf[end] = b'0' + (small % 10) as u8;
            small /= 10;
        }
        u128::from(small)
    } else {
        let mut large = magnitude;
        for _ in 0..scale {
            end -= 1;
            buf[end] = b'0' + (large % 10) as u8;
            large /= 10;
        }
        large
    };
    if scale > 0 {
        end -= 1;
        buf[end] = b'.';
    }
    let mut digits = itoa::Buffer::new();
    let integer = match u64::try_from(integer) {
        Ok(small) => digits.format(small),
        Err(_) => digits.format(integer),
    }
    .as_bytes();
    let mut start = end - integer.len();
    buf[start..end].copy_from_slice(integer);
    if d.raw < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    start -= 1;
    buf[start] = b'"';
    w.raw(&buf[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: FeatureValue) -> String {
        let mut w = CanonicalWriter::with_capacity(64);
        value(&mut w, v);
        String::from_utf8(w.as_bytes().to_vec()).unwrap_or_default()
    }

    #[test]
    fn decimals_format_as_fixed_displays_them() {
        for (raw, scale) in [
            (0, 0),
            (0, 4),
            (-5, 2),
            (123_456, 3),
            (-7, 0),
            (i128::MAX, 18),
        ] {
            let d = Fixed { raw, scale };
            let expected = format!("{{\"kind\":\"DECIMAL\",\"scale\":{scale},\"value\":\"{d}\"}}");
            assert_eq!(text(FeatureValue::Decimal(d)), expected);
        }
        let min = Fixed {
            raw: i128::MIN + 1,
            scale: 0,
        };
        assert!(text(FeatureValue::Decimal(min)).contains(&format!("\"{min}\"")));
    }

    #[test]
    fn other_variants_in_canonical_key_order() {
        assert_eq!(
            text(FeatureValue::Integer(-1)),
            r#"{"kind":"INTEGER","value":"-1"}"#
        );
        assert_eq!(
            text(FeatureValue::UnixNanos(u64::MAX)),
            r#"{"kind":"UNIX_NANOS","value":"18446744073709551615"}"#
        );
        let warming = AbsentReason::WarmingUp {
            bars_seen: 3,
            bars_needed: 15,
        };
        assert_eq!(
            text(FeatureValue::Absent(warming)),
            r#"{"bars_needed":15,"bars_seen":3,"kind":"ABSENT","reason":"WARMING_UP"}"#
        );
        assert_eq!(
            text(FeatureValue::Absent(AbsentReason::GapInInput)),
            r#"{"kind":"ABSENT","reason":"GAP_IN_INPUT"}"#
        );
    }

    #[test]
    fn an_id_needing_escapes_is_escaped_once() {
        assert_eq!(
            &*head(r#"A"B\C.SIM"#),
            br#"{"instrument_id":"A\"B\\C.SIM","operations":["#
        );
        let pieces = KeyPieces::new("rsi_14.value");
        assert_eq!(&*pieces.retire, br#"{"key":"rsi_14.value","op":"RETIRE"}"#);
        assert_eq!(
            &*pieces.upsert,
            br#"{"key":"rsi_14.value","op":"UPSERT","value":"#
        );
    }
}
