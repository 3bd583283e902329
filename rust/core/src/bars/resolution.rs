//! Resolutions on the UTC calendar grid and the two bar channels.

use super::BarsError;

/// One minute in nanoseconds.
pub const MINUTE_NS: u64 = 60_000_000_000;

/// A bar resolution. Buckets sit on the UTC calendar grid: multiples of the step since the
/// epoch, so 1d starts at 00:00 UTC and 4h at 00/04/08/12/16/20 (86,400 s divides evenly).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resolution {
    /// 1 minute (native, durable).
    M1,
    /// 5 minutes.
    M5,
    /// 15 minutes.
    M15,
    /// 30 minutes.
    M30,
    /// 1 hour.
    H1,
    /// 4 hours.
    H4,
    /// 1 day.
    D1,
}

impl Resolution {
    /// Every resolution, native first.
    pub const ALL: [Self; 7] = [
        Self::M1,
        Self::M5,
        Self::M15,
        Self::M30,
        Self::H1,
        Self::H4,
        Self::D1,
    ];
    /// The derived resolutions.
    pub const DERIVED: [Self; 6] = [Self::M5, Self::M15, Self::M30, Self::H1, Self::H4, Self::D1];

    /// The wire name (`1m` ... `1d`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::M1 => "1m",
            Self::M5 => "5m",
            Self::M15 => "15m",
            Self::M30 => "30m",
            Self::H1 => "1h",
            Self::H4 => "4h",
            Self::D1 => "1d",
        }
    }

    /// Minutes per bucket.
    #[must_use]
    pub const fn minutes(self) -> u64 {
        match self {
            Self::M1 => 1,
            Self::M5 => 5,
            Self::M15 => 15,
            Self::M30 => 30,
            Self::H1 => 60,
            Self::H4 => 240,
            Self::D1 => 1440,
        }
    }

    /// The bucket width in nanoseconds.
    #[must_use]
    pub const fn step_ns(self) -> u64 {
        self.minutes() * MINUTE_NS
    }

    /// Parse a wire name.
    ///
    /// # Errors
    /// [`BarsError::UnknownResolution`].
    pub fn parse(name: &str) -> Result<Self, BarsError> {
        Self::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| BarsError::UnknownResolution {
                name: name.to_owned(),
            })
    }

    /// The end (close) of the bucket holding the 1-minute bar that closes at `ts_event`.
    #[must_use]
    pub const fn bucket_end(self, ts_event: u64) -> u64 {
        let step = self.step_ns();
        (ts_event - 1) / step * step + step
    }
}

/// Where closed 1-minute bars come from. The two are kept apart and never cross-filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Venue candles (live, history, backfill, repair). A missing minute inside observed
    /// coverage is a gap.
    External,
    /// Bars aggregated by the framework from trades. A missing minute is a no-trade minute:
    /// the series is sparse (`sparse_ok`).
    Internal,
}

impl Channel {
    /// The wire name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::External => "EXTERNAL",
            Self::Internal => "INTERNAL",
        }
    }

    /// Parse a wire name.
    ///
    /// # Errors
    /// [`BarsError::UnknownChannel`].
    pub fn parse(name: &str) -> Result<Self, BarsError> {
        match name {
            "EXTERNAL" => Ok(Self::External),
            "INTERNAL" => Ok(Self::Internal),
            _ => Err(BarsError::UnknownChannel {
                name: name.to_owned(),
            }),
        }
    }

    /// Whether missing minutes inside coverage are allowed (no-trade minutes).
    #[must_use]
    pub const fn sparse_ok(self) -> bool {
        matches!(self, Self::Internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 60 * MINUTE_NS;

    #[test]
    fn buckets_sit_on_the_utc_grid() {
        let day = 24 * HOUR;
        // The bar closing at 00:01 belongs to the day starting at 00:00.
        assert_eq!(Resolution::D1.bucket_end(day + MINUTE_NS), 2 * day);
        // The bar closing exactly at midnight is the last minute of the previous day.
        assert_eq!(Resolution::D1.bucket_end(2 * day), 2 * day);
        assert_eq!(Resolution::H4.bucket_end(day + 4 * HOUR), day + 4 * HOUR);
        assert_eq!(
            Resolution::H4.bucket_end(day + 4 * HOUR + MINUTE_NS),
            day + 8 * HOUR
        );
        assert_eq!(Resolution::M5.bucket_end(7 * MINUTE_NS), 10 * MINUTE_NS);
        assert_eq!(Resolution::M1.bucket_end(7 * MINUTE_NS), 7 * MINUTE_NS);
    }

    #[test]
    fn names_round_trip() {
        for r in Resolution::ALL {
            assert_eq!(Resolution::parse(r.name()), Ok(r));
        }
        assert!(Resolution::parse("2h").is_err());
        assert!(Channel::parse("external").is_err());
    }
}
