//! The patterns of `svc.pattern_observation` (see `observations.rs` for the rules): the row
//! keys they read and the exact comparisons from the previous bar's values to the new ones.

use std::cmp::Ordering;

use crate::decimal::Fixed;
use crate::features::FeatureValue;

/// The row keys the patterns read, each at its slot below.
pub(super) const KEYS: [&str; 8] = [
    "ema_20.value",
    "sma_20.value",
    "macd_12_26_9.line",
    "macd_12_26_9.signal",
    "rsi_14.value",
    "donchian_20.high",
    "donchian_20.low",
    "bb_20_2.percent_b",
];
const EMA: usize = 0;
const SMA: usize = 1;
const LINE: usize = 2;
const SIGNAL: usize = 3;
const RSI: usize = 4;
const HIGH: usize = 5;
const LOW: usize = 6;
const PERCENT_B: usize = 7;

/// A row's values at [`KEYS`]' slots (`None`: a key the universe does not select).
pub(super) type Values = [Option<FeatureValue>; KEYS.len()];

/// A pattern of `svc.pattern_observation`, in the schema's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// `ema_20` crosses above `sma_20`.
    MaCrossUp,
    /// `ema_20` crosses below `sma_20`.
    MaCrossDown,
    /// The MACD line crosses above its signal.
    MacdSignalCrossUp,
    /// The MACD line crosses below its signal.
    MacdSignalCrossDown,
    /// RSI rises above 70.
    RsiEnterOverbought,
    /// RSI falls back to 70 or below.
    RsiLeaveOverbought,
    /// RSI falls below 30.
    RsiEnterOversold,
    /// RSI rises back to 30 or above.
    RsiLeaveOversold,
    /// The close above the previous bar's 20-bar high.
    DonchianBreakoutUp,
    /// The close below the previous bar's 20-bar low.
    DonchianBreakoutDown,
    /// `%b` rises above 1.
    BollingerBreakUp,
    /// `%b` falls below 0.
    BollingerBreakDown,
}

impl Pattern {
    /// Every pattern, in the schema's order.
    pub const ALL: [Self; 12] = [
        Self::MaCrossUp,
        Self::MaCrossDown,
        Self::MacdSignalCrossUp,
        Self::MacdSignalCrossDown,
        Self::RsiEnterOverbought,
        Self::RsiLeaveOverbought,
        Self::RsiEnterOversold,
        Self::RsiLeaveOversold,
        Self::DonchianBreakoutUp,
        Self::DonchianBreakoutDown,
        Self::BollingerBreakUp,
        Self::BollingerBreakDown,
    ];

    /// The wire name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::MaCrossUp => "MA_CROSS_UP",
            Self::MaCrossDown => "MA_CROSS_DOWN",
            Self::MacdSignalCrossUp => "MACD_SIGNAL_CROSS_UP",
            Self::MacdSignalCrossDown => "MACD_SIGNAL_CROSS_DOWN",
            Self::RsiEnterOverbought => "RSI_ENTER_OVERBOUGHT",
            Self::RsiLeaveOverbought => "RSI_LEAVE_OVERBOUGHT",
            Self::RsiEnterOversold => "RSI_ENTER_OVERSOLD",
            Self::RsiLeaveOversold => "RSI_LEAVE_OVERSOLD",
            Self::DonchianBreakoutUp => "DONCHIAN_BREAKOUT_UP",
            Self::DonchianBreakoutDown => "DONCHIAN_BREAKOUT_DOWN",
            Self::BollingerBreakUp => "BOLLINGER_BREAK_UP",
            Self::BollingerBreakDown => "BOLLINGER_BREAK_DOWN",
        }
    }

    /// `UP` or `DOWN`, as the schema ties it to the pattern.
    #[must_use]
    pub const fn direction(self) -> &'static str {
        match self {
            Self::MaCrossUp
            | Self::MacdSignalCrossUp
            | Self::RsiEnterOverbought
            | Self::RsiLeaveOversold
            | Self::DonchianBreakoutUp
            | Self::BollingerBreakUp => "UP",
            _ => "DOWN",
        }
    }
}

/// A value as a fixed decimal (an integer or a timestamp at scale 0); `None` for ABSENT.
fn fixed(value: Option<FeatureValue>) -> Option<Fixed> {
    match value? {
        FeatureValue::Decimal(d) => Some(d),
        FeatureValue::Integer(i) => Some(Fixed {
            raw: i128::from(i),
            scale: 0,
        }),
        FeatureValue::UnixNanos(ns) => Some(Fixed {
            raw: i128::from(ns),
            scale: 0,
        }),
        FeatureValue::Absent(_) => None,
    }
}

/// `a` against `b`, exactly: the coarser mantissa is brought to the finer scale (one beyond
/// 128 bits there is beyond the other, on its own sign's side).
pub(super) fn compare(a: Fixed, b: Fixed) -> Ordering {
    let widen = |raw: i128, by: u8| {
        10i128
            .checked_pow(u32::from(by))
            .and_then(|p| raw.checked_mul(p))
    };
    match a.scale.cmp(&b.scale) {
        Ordering::Equal => a.raw.cmp(&b.raw),
        Ordering::Less => {
            widen(a.raw, b.scale - a.scale).map_or_else(|| a.raw.cmp(&0), |a| a.cmp(&b.raw))
        }
        Ordering::Greater => {
            widen(b.raw, a.scale - b.scale).map_or_else(|| 0.cmp(&b.raw), |b| a.raw.cmp(&b))
        }
    }
}

/// `test` on the order of `a` against `b`; false when either is ABSENT or unselected.
fn holds(a: Option<Fixed>, b: Option<Fixed>, test: fn(Ordering) -> bool) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => test(compare(a, b)),
        _ => false,
    }
}

const fn whole(units: i128) -> Option<Fixed> {
    Some(Fixed {
        raw: units,
        scale: 0,
    })
}

/// The patterns of one row from `before` (the previous bar's values) to `now` (with the new
/// bar's `close`), in pattern order, each with the values that made it.
pub(super) fn patterns(
    before: &Values,
    now: &Values,
    close: Option<Fixed>,
    mut see: impl FnMut(Pattern, Vec<(&'static str, FeatureValue)>),
) {
    let le = |o: Ordering| o != Ordering::Greater;
    let ge = |o: Ordering| o != Ordering::Less;
    let gt = |o: Ordering| o == Ordering::Greater;
    let lt = |o: Ordering| o == Ordering::Less;
    // The new bar's values of `slots`, in key order; every one is present when a pattern
    // held on them.
    let current = |slots: &[usize]| {
        let mut values: Vec<(&'static str, FeatureValue)> = slots
            .iter()
            .filter_map(|&s| now[s].map(|v| (KEYS[s], v)))
            .collect();
        values.sort_unstable_by_key(|&(key, _)| key);
        values
    };
    let (b, n) = (|s: usize| fixed(before[s]), |s: usize| fixed(now[s]));
    let crosses = [
        (EMA, SMA, Pattern::MaCrossUp),
        (LINE, SIGNAL, Pattern::MacdSignalCrossUp),
    ];
    for (fast, slow, up) in crosses {
        if holds(b(fast), b(slow), le) && holds(n(fast), n(slow), gt) {
            see(up, current(&[fast, slow]));
        }
        if holds(b(fast), b(slow), ge) && holds(n(fast), n(slow), lt) {
            see(Pattern::ALL[up as usize + 1], current(&[fast, slow]));
        }
    }
    let levels = [
        (
            Pattern::RsiEnterOverbought,
            70,
            le as fn(Ordering) -> bool,
            gt as fn(Ordering) -> bool,
        ),
        (Pattern::RsiLeaveOverbought, 70, gt, le),
        (Pattern::RsiEnterOversold, 30, ge, lt),
        (Pattern::RsiLeaveOversold, 30, lt, ge),
    ];
    for (pattern, level, was, is) in levels {
        if holds(b(RSI), whole(level), was) && holds(n(RSI), whole(level), is) {
            see(pattern, current(&[RSI]));
        }
    }
    let breakouts = [
        (
            Pattern::DonchianBreakoutUp,
            HIGH,
            gt as fn(Ordering) -> bool,
        ),
        (Pattern::DonchianBreakoutDown, LOW, lt),
    ];
    for (pattern, bound, beyond) in breakouts {
        if n(bound).is_some() && holds(close, b(bound), beyond) {
            if let Some(broken) = before[bound] {
                see(pattern, vec![(KEYS[bound], broken)]);
            }
        }
    }
    let bands = [
        (
            Pattern::BollingerBreakUp,
            1,
            le as fn(Ordering) -> bool,
            gt as fn(Ordering) -> bool,
        ),
        (Pattern::BollingerBreakDown, 0, ge, lt),
    ];
    for (pattern, level, was, is) in bands {
        if holds(b(PERCENT_B), whole(level), was) && holds(n(PERCENT_B), whole(level), is) {
            see(pattern, current(&[PERCENT_B]));
        }
    }
}
