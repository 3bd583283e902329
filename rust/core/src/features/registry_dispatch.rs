//! [`AnyKernel`]: one kernel of any kind, dispatched through a `match` (no dynamic
//! dispatch: one inlined `match` per bar).

use super::*;
use crate::features::volume_zscore::Strided;
use crate::features::window::Ring;

/// One kernel of any kind: static dispatch through a `match`.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub enum AnyKernel {
    Sma(Sma),
    Ema(Ema),
    Rsi(Rsi),
    Atr(Atr),
    Bollinger(Bollinger),
    Macd(Macd),
    Roc(Roc),
    RealizedVol(RealizedVol),
    VolumeZscore(VolumeZscore),
    Vwap(Vwap),
    Donchian(Donchian),
    Trend(Trend),
}

/// A bar field some kernels keep a ring of, every bar's since their last reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    /// The close.
    Closes,
    /// The volume.
    Volumes,
}

impl AnyKernel {
    /// The ring of every `series` value this kernel took since its last reset (the newest
    /// ones its window holds), where they sit in its slots, and how many bars it took: what
    /// a view reads ([`Self::viewing`]). `None` for kinds that keep no such ring.
    pub(crate) fn window(&self, series: Series) -> Option<(Ring, Strided, u64)> {
        let plain = |ring: Ring, seen: u64| Some((ring, Strided::PLAIN, seen));
        match (series, self) {
            (Series::Closes, Self::Sma(k)) => plain(k.closes(), k.bars_seen()),
            (Series::Closes, Self::Roc(k)) => plain(k.closes(), k.bars_seen()),
            (Series::Closes, Self::Bollinger(k)) => plain(k.closes(), k.bars_seen()),
            (Series::Closes, Self::RealizedVol(k)) => plain(k.closes(), k.bars_seen()),
            (Series::Closes, Self::Trend(k)) => plain(k.closes(), k.bars_seen()),
            (Series::Volumes, Self::VolumeZscore(k)) => {
                let (ring, at) = k.volumes();
                Some((ring, at, k.bars_seen()))
            }
            (Series::Volumes, Self::Vwap(k)) => {
                let (ring, at) = k.volumes();
                Some((ring, at, k.bars_seen()))
            }
            _ => None,
        }
    }

    /// For a kind whose values are a function of its newest values of one series alone:
    /// that series and how many it reads. Such a kernel can view another's ring of at least
    /// that many instead of keeping its own. `None` for the other kinds.
    pub(crate) fn reads(&self) -> Option<(Series, usize)> {
        match self {
            Self::Sma(k) => Some((Series::Closes, k.slots())),
            Self::Roc(k) => Some((Series::Closes, k.slots())),
            Self::Bollinger(k) => Some((Series::Closes, k.slots())),
            Self::RealizedVol(k) => Some((Series::Closes, k.slots())),
            Self::VolumeZscore(k) => Some((Series::Volumes, k.slots())),
            _ => None,
        }
    }

    /// This template reading `source`'s ring of the series it reads ([`Self::window`]) as
    /// its own, with its bars seen; `None` when either kind cannot.
    pub(crate) fn viewing(&self, source: &AnyKernel) -> Option<AnyKernel> {
        let (series, _) = self.reads()?;
        let (ring, at, seen) = source.window(series)?;
        // Closes sit alone in every ring that keeps them.
        let closes = (at == Strided::PLAIN).then_some(ring);
        match self {
            Self::Sma(k) => Some(Self::Sma(k.viewing(closes?, seen))),
            Self::Roc(k) => Some(Self::Roc(k.viewing(closes?, seen))),
            Self::Bollinger(k) => Some(Self::Bollinger(k.viewing(closes?, seen))),
            Self::RealizedVol(k) => Some(Self::RealizedVol(k.viewing(closes?, seen))),
            Self::VolumeZscore(k) => Some(Self::VolumeZscore(k.viewing((ring, at), seen))),
            _ => None,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $k:ident => $body:expr) => {
        match $self {
            AnyKernel::Sma($k) => $body,
            AnyKernel::Ema($k) => $body,
            AnyKernel::Rsi($k) => $body,
            AnyKernel::Atr($k) => $body,
            AnyKernel::Bollinger($k) => $body,
            AnyKernel::Macd($k) => $body,
            AnyKernel::Roc($k) => $body,
            AnyKernel::RealizedVol($k) => $body,
            AnyKernel::VolumeZscore($k) => $body,
            AnyKernel::Vwap($k) => $body,
            AnyKernel::Donchian($k) => $body,
            AnyKernel::Trend($k) => $body,
        }
    };
}

impl Kernel for AnyKernel {
    #[inline]
    fn slots(&self) -> usize {
        dispatch!(self, k => k.slots())
    }

    #[inline]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        dispatch!(self, k => k.update(slots, bar));
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        // One match per block, then the kernel's own tight loop.
        dispatch!(self, k => k.warm_block(slots, block));
    }

    fn warm(&mut self, slots: &mut [f64], bars: &[BarInput]) {
        dispatch!(self, k => k.warm(slots, bars));
    }

    fn inputs(&self) -> Inputs {
        dispatch!(self, k => k.inputs())
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        dispatch!(self, k => k.values(slots))
    }

    fn warmup_bars(&self) -> u64 {
        dispatch!(self, k => k.warmup_bars())
    }

    fn bars_seen(&self) -> u64 {
        dispatch!(self, k => k.bars_seen())
    }

    fn reset(&mut self) {
        dispatch!(self, k => k.reset());
    }
}
