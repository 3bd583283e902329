//! [`AnyKernel`]: one kernel of any kind, dispatched through a `match` (no dynamic
//! dispatch: one inlined `match` per bar).

use super::*;
use crate::features::bar_ring::BarRing;
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

/// A ring some kernels keep of every bar they took since their last reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    /// The closes ([`Ring`]).
    Closes,
    /// The bars' high, low, close and volume ([`BarRing`]).
    Bars,
}

/// A kernel's ring of [`Series`], as a view reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Window {
    /// A ring of closes.
    Closes(Ring),
    /// A ring of bars.
    Bars(BarRing),
}

impl Window {
    /// What it holds.
    pub(crate) fn series(&self) -> Series {
        match self {
            Self::Closes(_) => Series::Closes,
            Self::Bars(_) => Series::Bars,
        }
    }

    /// Bars it can hold.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Self::Closes(ring) => ring.slots(),
            Self::Bars(ring) => ring.capacity(),
        }
    }
}

impl AnyKernel {
    /// The ring this kernel keeps of every bar (or close) it took since its last reset (the
    /// newest ones its window holds), and how many bars it took: what a view reads
    /// ([`Self::viewing`]). `None` for kinds that keep no such ring.
    pub(crate) fn window(&self) -> Option<(Window, u64)> {
        let window = match self {
            Self::Sma(k) => Window::Closes(k.closes()),
            Self::Roc(k) => Window::Closes(k.closes()),
            Self::Bollinger(k) => Window::Closes(k.closes()),
            Self::RealizedVol(k) => Window::Closes(k.closes()),
            Self::Trend(k) => Window::Closes(k.closes()),
            Self::VolumeZscore(k) => Window::Bars(k.bars()),
            Self::Vwap(k) => Window::Bars(k.bars()),
            Self::Donchian(k) => Window::Bars(k.bars()),
            _ => return None,
        };
        Some((window, self.bars_seen()))
    }

    /// For a kind whose values are a function of its newest entries of one ring alone: that
    /// ring's series and how many entries it reads. Such a kernel can view another's ring of
    /// at least that many instead of keeping its own. `None` for the other kinds.
    pub(crate) fn reads(&self) -> Option<(Series, usize)> {
        let (window, _) = self.window()?;
        // The trend keeps a running sum besides its ring: it reads no other's.
        (!matches!(self, Self::Trend(_))).then(|| (window.series(), window.capacity()))
    }

    /// This template reading `source`'s ring ([`Self::window`]) as its own, with its bars
    /// seen; `None` when either kind cannot.
    pub(crate) fn viewing(&self, source: &AnyKernel) -> Option<AnyKernel> {
        self.reads()?;
        let (window, seen) = source.window()?;
        Some(match (self, window) {
            (Self::Sma(k), Window::Closes(ring)) => Self::Sma(k.viewing(ring, seen)),
            (Self::Roc(k), Window::Closes(ring)) => Self::Roc(k.viewing(ring, seen)),
            (Self::Bollinger(k), Window::Closes(ring)) => Self::Bollinger(k.viewing(ring, seen)),
            (Self::RealizedVol(k), Window::Closes(ring)) => {
                Self::RealizedVol(k.viewing(ring, seen))
            }
            (Self::VolumeZscore(k), Window::Bars(ring)) => {
                Self::VolumeZscore(k.viewing(ring, seen))
            }
            (Self::Vwap(k), Window::Bars(ring)) => Self::Vwap(k.viewing(ring, seen)),
            (Self::Donchian(k), Window::Bars(ring)) => Self::Donchian(k.viewing(ring, seen)),
            _ => return None,
        })
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
