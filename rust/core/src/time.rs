//! Nanosecond timestamps (pinned decision 4): strings matching `^(0|[1-9][0-9]*)$` that fit u64.

use crate::error::TimestampError;

/// Parse a nanosecond-epoch string.
///
/// # Errors
/// [`TimestampError`] naming the value when it is not canonical digits or exceeds u64.
pub fn parse_timestamp(text: &str) -> Result<u64, TimestampError> {
    let bytes = text.as_bytes();
    let canonical = !bytes.is_empty()
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes[0] != b'0' || bytes.len() == 1);
    if !canonical {
        return Err(TimestampError::Syntax {
            value: text.to_owned(),
        });
    }
    text.parse::<u64>().map_err(|_| TimestampError::OutOfRange {
        value: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_canonical_digits_only() {
        assert_eq!(parse_timestamp("0"), Ok(0));
        assert_eq!(
            parse_timestamp("1700000000000000000"),
            Ok(1_700_000_000_000_000_000)
        );
        assert_eq!(parse_timestamp("18446744073709551615"), Ok(u64::MAX));
        for bad in ["", "01", "-1", "+1", "1.0", "1e9", " 1", "１"] {
            assert!(
                matches!(parse_timestamp(bad), Err(TimestampError::Syntax { .. })),
                "{bad:?}"
            );
        }
        assert!(matches!(
            parse_timestamp("18446744073709551616"),
            Err(TimestampError::OutOfRange { .. })
        ));
    }
}
