//! The screener stream's events as the hub queues them, written once: `id: <version>`, the
//! event name and the document on one `data` line, a blank line after. A `delta` carries a
//! document of the delta writer; a `row` (a changed row with no bar yet, which a delta could
//! not stamp) carries the whole `svc.feature_row`, written as the Python stream encodes its
//! dict (members in the dict's order, not canonical), so the bytes are the ones it sent.

use std::sync::Arc;

use super::super::encode;
use crate::bars::Resolution;
use crate::features::{AbsentReason, FeatureError, FeatureValue, Universe, Updated};
use crate::json::CanonicalWriter;
use crate::WIRE_VERSION;

/// One event for the hub: its kind (the row's resolution), its instrument and its bytes.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The row's resolution (the hub's event kind).
    pub resolution: Resolution,
    /// The row's instrument id.
    pub instrument: Arc<str>,
    /// The SSE event.
    pub bytes: Arc<[u8]>,
}

/// `id: <version>\nevent: <event>\ndata: `: what the delta writer frames a `delta` with.
pub(super) fn head(version: u64, event: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(48);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(itoa::Buffer::new().format(version).as_bytes());
    out.extend_from_slice(b"\nevent: ");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out
}

/// A `row` event of `row` (of instrument `instrument_id`) at `version`.
///
/// # Errors
/// [`FeatureError::UnknownInstrument`].
pub(super) fn row(
    version: u64,
    universe: &Universe,
    row: Updated,
    instrument_id: &str,
) -> Result<Arc<[u8]>, FeatureError> {
    let state = universe.state(row.instrument, row.resolution)?;
    let mut w = CanonicalWriter::with_capacity(4096);
    w.raw(b"{\"version\":");
    w.string(WIRE_VERSION);
    w.raw(b",\"schema_id\":\"svc.feature_row\",\"schema_version\":1,\"instrument_id\":");
    w.string(instrument_id);
    w.raw(b",\"resolution\":");
    w.string(row.resolution.name());
    w.raw(b",\"ts_event\":");
    match universe.last_ts_event(row.instrument, row.resolution)? {
        Some(ts) => w.string(itoa::Buffer::new().format(ts)),
        None => w.null(),
    }
    w.raw(b",\"values\":{");
    encode::members(&mut w, state.row(), wire_value);
    w.raw(b"}}");
    let mut out = head(version, "row");
    out.extend_from_slice(w.as_bytes());
    out.extend_from_slice(b"\n\n");
    Ok(Arc::from(out))
}

/// A value as `FeatureUniverse.row` gives it: `kind` first, then `value` and `scale`, or
/// `reason` (with `bars_seen`, `bars_needed` while warming up).
fn wire_value(w: &mut CanonicalWriter, value: FeatureValue) {
    w.raw(b"{\"kind\":");
    w.string(value.kind());
    match value {
        FeatureValue::Decimal(d) => {
            w.raw(b",\"value\":");
            w.string(&d.to_string());
            w.raw(b",\"scale\":");
            w.int(i64::from(d.scale));
        }
        FeatureValue::Integer(i) => {
            w.raw(b",\"value\":");
            w.string(itoa::Buffer::new().format(i));
        }
        FeatureValue::UnixNanos(ns) => {
            w.raw(b",\"value\":");
            w.string(itoa::Buffer::new().format(ns));
        }
        FeatureValue::Absent(reason) => {
            w.raw(b",\"reason\":");
            w.string(reason.symbol());
            if let AbsentReason::WarmingUp {
                bars_seen,
                bars_needed,
            } = reason
            {
                w.raw(b",\"bars_seen\":");
                w.raw(itoa::Buffer::new().format(bars_seen).as_bytes());
                w.raw(b",\"bars_needed\":");
                w.raw(itoa::Buffer::new().format(bars_needed).as_bytes());
            }
        }
    }
    w.raw(b"}");
}
