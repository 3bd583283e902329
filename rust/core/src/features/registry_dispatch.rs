//! [`AnyKernel`]: one kernel of any kind, dispatched through a `match` (no dynamic
//! dispatch: one inlined `match` per bar).

use super::*;

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

impl AnyKernel {
    /// The ring of every close this kernel took since its last reset (the newest ones its
    /// window holds), and how many bars it took: what a view reads ([`Self::viewing`]).
    /// `None` for kinds that keep no such ring.
    pub(crate) fn closes(&self) -> Option<(crate::features::window::Ring, u64)> {
        match self {
            Self::Sma(k) => Some((k.closes(), k.bars_seen())),
            Self::Roc(k) => Some((k.closes(), k.bars_seen())),
            Self::Bollinger(k) => Some((k.closes(), k.bars_seen())),
            Self::Trend(k) => Some((k.closes(), k.bars_seen())),
            _ => None,
        }
    }

    /// For a kind whose values are a function of its newest closes alone: how many it
    /// reads. Such a kernel can view another's ring of at least that many closes instead
    /// of keeping its own. `None` for the other kinds.
    pub(crate) fn closes_read(&self) -> Option<usize> {
        match self {
            Self::Sma(k) => Some(k.slots()),
            Self::Roc(k) => Some(k.slots()),
            Self::Bollinger(k) => Some(k.slots()),
            _ => None,
        }
    }

    /// This template reading `source`'s ring of closes ([`Self::closes`]) as its own, with
    /// its bars seen; `None` when either kind cannot.
    pub(crate) fn viewing(&self, source: &AnyKernel) -> Option<AnyKernel> {
        let (closes, seen) = source.closes()?;
        match self {
            Self::Sma(k) => Some(Self::Sma(k.viewing(closes, seen))),
            Self::Roc(k) => Some(Self::Roc(k.viewing(closes, seen))),
            Self::Bollinger(k) => Some(Self::Bollinger(k.viewing(closes, seen))),
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
