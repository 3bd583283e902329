//! Instrument ids and rows as the screener's writers take them: named by index, in order
//! from 0; the checks both writers make before reading a universe.

use crate::features::{FeatureError, Universe, Updated};

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

/// Name instrument `index` in a writer's `names` (per instrument index, `None`: unnamed) with
/// `name(instrument_id)`: an existing one renamed, or the next new one. Returns the number of
/// instruments, for the writer to size its rows.
///
/// # Errors
/// [`FeatureError::InvalidInstrumentId`] for an id the schemas refuse,
/// [`FeatureError::InstrumentIndexGap`] for an index past the next one.
pub(super) fn register<T>(
    names: &mut Vec<Option<T>>,
    index: u32,
    instrument_id: &str,
    name: impl FnOnce(&str) -> T,
) -> Result<usize, FeatureError> {
    if !is_instrument_id(instrument_id) {
        return Err(FeatureError::InvalidInstrumentId {
            index,
            instrument_id: instrument_id.to_owned(),
        });
    }
    let (i, next) = (index as usize, names.len());
    if i > next {
        return Err(FeatureError::InstrumentIndexGap { index, next });
    }
    if i == next {
        names.push(None);
    }
    names[i] = Some(name(instrument_id));
    Ok(names.len())
}

/// Every instrument of `universe` has an id in `ids` (per instrument index; `None`: unnamed).
///
/// # Errors
/// [`FeatureError::UnregisteredInstrument`] for the first one without.
pub(super) fn check_ids<T>(ids: &[Option<T>], universe: &Universe) -> Result<(), FeatureError> {
    let missing = (0..universe.len()).find(|&i| ids.get(i).is_none_or(Option::is_none));
    match missing {
        Some(index) => Err(FeatureError::UnregisteredInstrument { index }),
        None => Ok(()),
    }
}

/// Every one of `rows` is a row of `universe`.
///
/// # Errors
/// [`FeatureError::UnknownInstrument`] for the first one outside it.
pub(super) fn check_rows(universe: &Universe, rows: &[Updated]) -> Result<(), FeatureError> {
    match rows
        .iter()
        .find(|r| r.instrument as usize >= universe.len())
    {
        Some(row) => Err(FeatureError::UnknownInstrument {
            index: row.instrument as usize,
            len: universe.len(),
        }),
        None => Ok(()),
    }
}

/// Take `universe`'s keys in the order its rows are visited into `visited`; `false` (and
/// `visited` untouched) when they are the ones already there.
pub(super) fn take_visit_order(universe: &Universe, visited: &mut Vec<Box<str>>) -> bool {
    let keys = universe.features().iter().flat_map(|f| f.keys.iter());
    if keys
        .clone()
        .map(String::as_str)
        .eq(visited.iter().map(|k| &**k))
    {
        return false;
    }
    *visited = keys.map(|k| k.as_str().into()).collect();
    true
}
