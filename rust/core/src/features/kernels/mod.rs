//! The indicators, one per file, grouped by family. A kernel knows the [`super::kernel`]
//! contract and the engine's primitives (rings, packed words, blocks); nothing here knows
//! the dispatch that runs it.

pub mod average;
pub mod momentum;
pub mod volatility;
pub mod volume;

pub use average::{ema::Ema, sma::Sma, vwap::Vwap};
pub use momentum::{macd::Macd, roc::Roc, rsi::Rsi, stochastic::Stochastic, trend::Trend};
pub use volatility::{
    atr::Atr, bollinger::Bollinger, donchian::Donchian, realized_vol::RealizedVol,
};
pub use volume::volume_zscore::VolumeZscore;
pub mod windowed;
