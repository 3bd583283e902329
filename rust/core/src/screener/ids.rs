//! Instrument ids as the screener's writers take them: named by index, in order from 0.

use crate::features::FeatureError;

/// Whether `id` is a canonical `SYMBOL.VENUE` instrument id as the schemas allow: printable
/// ASCII, the venue after the last dot `[A-Z][A-Z0-9_]*`, at most 128 characters.
fn is_instrument_id(id: &str) -> bool {
    let Some((symbol, venue)) = id.rsplit_once('.') else {
        return false;
    };
    let venue_ok = venue.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && venue
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    id.len() <= 128
        && !symbol.is_empty()
        && symbol.bytes().all(|b| (b'!'..=b'~').contains(&b))
        && venue_ok
}

/// The slot of instrument `index` named `instrument_id` in a writer that has `next` named
/// (an existing one renamed, or the next new one).
///
/// # Errors
/// [`FeatureError::InvalidInstrumentId`] for an id the schemas refuse,
/// [`FeatureError::InstrumentIndexGap`] for an index past the next one.
pub(super) fn registered(
    index: u32,
    instrument_id: &str,
    next: usize,
) -> Result<usize, FeatureError> {
    if !is_instrument_id(instrument_id) {
        return Err(FeatureError::InvalidInstrumentId {
            index,
            instrument_id: instrument_id.to_owned(),
        });
    }
    let i = index as usize;
    if i > next {
        return Err(FeatureError::InstrumentIndexGap { index, next });
    }
    Ok(i)
}
