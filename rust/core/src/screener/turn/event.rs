//! One live close as the node streams it: an `svc.bar_envelope` event's JSON payload, read
//! strictly for the members the fold takes (`instrument_id`; each bar's `ts_event`, prices,
//! `volume` and `sequence`), every other member checked and stepped over.
//!
//! The reader accepts only what the per-event path (Python's `json.loads`, then the bar
//! columns) reads the same way, and leaves everything else to it: a payload it refuses is not
//! an error here, the caller folds the turn on that path, which raises what it always raised
//! (or takes what it always took: a float in the coverage, a sequence sent as a string). So
//! it refuses more than it must: any JSON the strict parser refuses, a member it takes given
//! twice (Python keeps the last), a bars member that is not an array, a sequence that is not a
//! non-negative integer, a price that is not exact at the instrument's precision, and a close
//! before the first minute (its observed minute would start before 0). A payload that is not
//! UTF-8 as a whole is refused before it is read.

use std::borrow::Cow;

use super::book::Book;
use crate::bars::{Bar, MINUTE_NS};
use crate::decimal::Fixed;
use crate::features::Universe;
use crate::json::Cursor;
use crate::parse_timestamp;

/// One bar of a live close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveBar {
    /// The instrument's index.
    pub instrument: u32,
    /// The bar (mantissas at the instrument's precisions).
    pub bar: Bar,
    /// The node's sequence number of the bar.
    pub sequence: u64,
}

/// What a payload the reader accepts holds for a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    /// Nothing to fold: an instrument the feed does not serve, or no bar.
    Skip,
    /// Bars of an instrument the feed serves, in the payload's order (at least one).
    Bars(Vec<LiveBar>),
}

/// The reader refused the payload (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Refused;

impl From<crate::json::JsonError> for Refused {
    fn from(_: crate::json::JsonError) -> Self {
        Self
    }
}

/// Read `payload` for feed number `feed` (`None`: a feed serving no instrument).
pub(super) fn read(
    payload: &[u8],
    feed: Option<u32>,
    book: &Book,
    universe: &Universe,
) -> Result<Event, Refused> {
    let text = std::str::from_utf8(payload).map_err(|_| Refused)?;
    let mut cursor = Cursor::on_str(text);
    cursor.skip_ws();
    let (mut id, mut bars): (Option<Cow<'_, str>>, Option<Cursor<'_>>) = (None, None);
    members(&mut cursor, |key, value| {
        match key {
            "instrument_id" if id.is_none() => {
                if value.peek() != Some(b'"') {
                    return Err(Refused);
                }
                id = Some(value.string()?);
                return Ok(());
            }
            "bars" if bars.is_none() => bars = Some(value.clone()),
            "instrument_id" | "bars" => return Err(Refused),
            _ => {}
        }
        Ok(value.skip_value(1)?)
    })?;
    if !cursor.at_end() {
        return Err(Refused);
    }
    let id = id.ok_or(Refused)?;
    let Some(instrument) = feed.and_then(|feed| book.served(&id, feed)) else {
        return Ok(Event::Skip);
    };
    let mut bars = bars.ok_or(Refused)?;
    let config = universe.series(instrument).map_err(|_| Refused)?.config();
    let scales = (u32::from(config.price_scale), u32::from(config.size_scale));
    let mut out = Vec::with_capacity(1);
    items(&mut bars, |row| {
        out.push(bar(row, instrument, scales)?);
        Ok(())
    })?;
    Ok(if out.is_empty() {
        Event::Skip
    } else {
        Event::Bars(out)
    })
}

/// One bar row: an object holding each member the fold takes once.
fn bar(
    row: &mut Cursor<'_>,
    instrument: u32,
    (price, size): (u32, u32),
) -> Result<LiveBar, Refused> {
    const NAMES: [&str; 7] = [
        "ts_event", "open", "high", "low", "close", "volume", "sequence",
    ];
    let mut values: [Option<i128>; 7] = [None; 7];
    members(row, |key, value| {
        let Some(k) = NAMES.iter().position(|name| *name == key) else {
            return Ok(value.skip_value(3)?);
        };
        if values[k].is_some() {
            return Err(Refused);
        }
        values[k] = Some(match k {
            6 => i128::from(value.number()?),
            _ => {
                if value.peek() != Some(b'"') {
                    return Err(Refused);
                }
                let text = value.string()?;
                match k {
                    0 => i128::from(parse_timestamp(&text).map_err(|_| Refused)?),
                    5 => Fixed::parse(&text, size).map_err(|_| Refused)?.raw,
                    _ => Fixed::parse(&text, price).map_err(|_| Refused)?.raw,
                }
            }
        });
        Ok(())
    })?;
    let [Some(ts), Some(open), Some(high), Some(low), Some(close), Some(volume), Some(sequence)] =
        values
    else {
        return Err(Refused);
    };
    let mantissa = |v: i128| i64::try_from(v).map_err(|_| Refused);
    let ts_event = u64::try_from(ts).map_err(|_| Refused)?;
    if ts_event < MINUTE_NS {
        return Err(Refused);
    }
    Ok(LiveBar {
        instrument,
        bar: Bar::new(
            ts_event,
            mantissa(open)?,
            mantissa(high)?,
            mantissa(low)?,
            mantissa(close)?,
            mantissa(volume)?,
        ),
        sequence: u64::try_from(sequence).map_err(|_| Refused)?,
    })
}

/// Each member of the object at `cursor`, the cursor handed to `member` on its value, which
/// must step over it.
fn members<'a>(
    cursor: &mut Cursor<'a>,
    mut member: impl FnMut(&str, &mut Cursor<'a>) -> Result<(), Refused>,
) -> Result<(), Refused> {
    if cursor.peek() != Some(b'{') {
        return Err(Refused);
    }
    let mut closed = cursor.open(b'}');
    while !closed {
        let key = cursor.key()?;
        member(&key, cursor)?;
        closed = cursor.after_item(b'}', "',' or '}'")?;
    }
    Ok(())
}

/// Each item of the array at `cursor` (a bars member), the cursor handed to `item` on it.
fn items<'a>(
    cursor: &mut Cursor<'a>,
    mut item: impl FnMut(&mut Cursor<'a>) -> Result<(), Refused>,
) -> Result<(), Refused> {
    if cursor.peek() != Some(b'[') {
        return Err(Refused);
    }
    let mut closed = cursor.open(b']');
    while !closed {
        cursor.skip_ws();
        item(cursor)?;
        closed = cursor.after_item(b']', "',' or ']'")?;
    }
    Ok(())
}
