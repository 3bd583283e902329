//! Momentum and trend: changes of price over a window or a smoothing.

pub mod macd;
pub mod roc;
pub mod rsi;
pub mod stochastic;
pub mod trend;
