//! Reading a definition's JSON objects: members by name (each once, none unknown, all
//! required), strings and arrays, each refusal naming its JSON path.

use crate::json::Value;
use crate::screener::error::ScreenError;

type Members<'v, 'a> = &'v [(std::borrow::Cow<'a, str>, Value<'a>)];

/// The members of an object at `path`, refusing a repeated or unknown member and a missing
/// required one; returns them in `names` order.
pub(crate) fn object<'v, 'a, const N: usize>(
    value: &'v Value<'a>,
    path: &str,
    names: [&str; N],
) -> Result<[&'v Value<'a>; N], ScreenError> {
    let Value::Object(members) = value else {
        return Err(ScreenError::at(
            path,
            format!("expected an object with {}", names.join(", ")),
        ));
    };
    let members: Members<'v, 'a> = members;
    let mut found: [Option<&Value<'a>>; N] = [None; N];
    for (key, item) in members {
        let slot = names
            .iter()
            .position(|n| *n == key.as_ref())
            .ok_or_else(|| {
                ScreenError::at(
                    path,
                    format!("unknown member {key:?}; allowed: {}", names.join(", ")),
                )
            })?;
        if found[slot].replace(item).is_some() {
            return Err(ScreenError::at(
                path,
                format!("member {key:?} appears twice"),
            ));
        }
    }
    let mut out: [&Value<'a>; N] = [&Value::Null; N];
    for (slot, (item, name)) in found.iter().zip(names).enumerate() {
        out[slot] = item.ok_or_else(|| {
            ScreenError::at(
                path,
                format!(
                    "missing member {name:?}; every member is required ({})",
                    names.join(", ")
                ),
            )
        })?;
    }
    Ok(out)
}

pub(crate) fn text<'v>(
    value: &'v Value<'_>,
    path: &str,
    what: &str,
) -> Result<&'v str, ScreenError> {
    match value {
        Value::Str(s) => Ok(s.as_ref()),
        _ => Err(ScreenError::at(path, format!("expected a string: {what}"))),
    }
}

pub(crate) fn array<'v, 'a>(
    value: &'v Value<'a>,
    path: &str,
    what: &str,
) -> Result<&'v [Value<'a>], ScreenError> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(ScreenError::at(path, format!("expected an array: {what}"))),
    }
}
