//! Volatility: ranges and dispersion of price.

pub mod atr;
pub mod bollinger;
pub mod donchian;
pub mod realized_vol;
