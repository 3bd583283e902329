//! Moving averages of price.

pub mod ema;
pub mod sma;
pub mod vwap;
