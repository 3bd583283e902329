//! [`AnyKernel`]: one kernel of any kind, dispatched through a `match` (no dynamic
//! dispatch: one inlined `match` per bar).

use super::*;
use crate::features::engine::bar_ring::BarRing;
use crate::features::engine::packed::Packed;
use crate::features::engine::ring::Ring;

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

/// Unpack, update, pack back.
#[inline(always)]
fn step<K: Kernel + Packed>(template: &K, words: &mut [f64], slots: &mut [f64], bar: &BarInput) {
    let mut kernel = K::unpack(template, words);
    kernel.update(slots, bar);
    kernel.pack(words);
}

macro_rules! kinds {
    ($($kind:ident),*) => {
        impl Packed for AnyKernel {
            /// The most words of any kind.
            const WORDS: usize = {
                let mut most = 0;
                $(if $kind::WORDS > most {
                    most = $kind::WORDS;
                })*
                most
            };

            fn pack(&self, words: &mut [f64]) {
                match self {
                    $(Self::$kind(kernel) => kernel.pack(words),)*
                }
            }

            fn unpack(template: &Self, words: &[f64]) -> Self {
                match template {
                    $(Self::$kind(kernel) => Self::$kind(Packed::unpack(kernel, words)),)*
                }
            }
        }

        /// Words of `kernel`'s kind.
        pub(crate) fn words(kernel: &AnyKernel) -> usize {
            match kernel {
                $(AnyKernel::$kind(_) => $kind::WORDS,)*
            }
        }

        /// The kernel of `template`'s spec packed in `words` takes `bar`.
        #[inline]
        pub(crate) fn update(
            template: &AnyKernel,
            words: &mut [f64],
            slots: &mut [f64],
            bar: &BarInput,
        ) {
            match template {
                $(AnyKernel::$kind(template) => step(template, words, slots, bar),)*
            }
        }

        /// Each `(lane, bar)` of `batch` updates that lane of a kernel column of `template`'s
        /// kind: `words` and `slots` hold every lane's, lane after lane. One dispatch for
        /// the batch, then a loop the kind's update is inlined into. A `dense` batch (lane
        /// `i` at place `i`, as when every instrument of a block closed) walks the lanes in
        /// step, without a lane's bounds computed and checked for every kernel.
        #[inline]
        pub(crate) fn update_lanes(
            template: &AnyKernel,
            words: &mut [f64],
            slots: &mut [f64],
            batch: &[(usize, BarInput)],
            dense: bool,
        ) {
            match template {
                $(AnyKernel::$kind(template) => {
                    let (w, s) = ($kind::WORDS, template.slots());
                    if dense && s == 0 {
                        for (words, (_, bar)) in words.chunks_exact_mut(w).zip(batch) {
                            step(template, words, &mut [], bar);
                        }
                        return;
                    }
                    if dense {
                        let lanes = words.chunks_exact_mut(w).zip(slots.chunks_exact_mut(s));
                        for ((words, slots), (_, bar)) in lanes.zip(batch) {
                            step(template, words, slots, bar);
                        }
                        return;
                    }
                    for &(l, ref bar) in batch {
                        step(
                            template,
                            &mut words[l * w..(l + 1) * w],
                            &mut slots[l * s..(l + 1) * s],
                            bar,
                        );
                    }
                })*
            }
        }
    };
}

kinds!(
    Sma,
    Ema,
    Rsi,
    Atr,
    Bollinger,
    Macd,
    Roc,
    RealizedVol,
    VolumeZscore,
    Vwap,
    Donchian,
    Trend
);

#[cfg(test)]
mod packed_tests {
    use super::*;
    use crate::features::testing::series;

    #[test]
    fn every_kind_unpacks_to_what_it_packed() {
        let mut templates: Vec<AnyKernel> = default_registry()
            .features()
            .iter()
            .map(|f| f.kernel())
            .collect();
        // A second spec of a kind: parameters come from the template, not the words.
        let other = build_spec(
            KernelKind::Macd,
            "m",
            &[("fast", "3"), ("slow", "5"), ("signal", "2")],
        );
        templates.extend(other.map(|c| c.kernel()));
        for template in templates {
            let mut kernel = template;
            let mut slots = vec![0.0; kernel.slots()];
            let mut packed = vec![0.0; words(&kernel)];
            assert!(packed.len() <= AnyKernel::WORDS);
            for (i, bar) in series(90).iter().enumerate() {
                if i % 41 == 40 {
                    kernel.reset();
                }
                kernel.update(&mut slots, bar);
                kernel.pack(&mut packed);
                let back = AnyKernel::unpack(&template, &packed);
                assert_eq!(format!("{back:?}"), format!("{kernel:?}"), "bar {i}");
            }
        }
    }

    /// Lanes walked in step (a dense batch) and by index take the same bits, for every
    /// kind, through rings filling and wrapping.
    #[test]
    fn dense_batches_equal_lanes_by_index() {
        const LANES: usize = 5;
        let bars = series(260);
        for template in default_registry().features().iter().map(|f| f.kernel()) {
            let (w, s) = (words(&template), template.slots());
            let column = |len: usize| {
                let mut words = vec![0.0; LANES * w];
                words
                    .chunks_exact_mut(w)
                    .for_each(|lane| template.pack(lane));
                (words, vec![0.0; len])
            };
            let (mut dense, mut dense_slots) = column(LANES * s);
            let (mut indexed, mut indexed_slots) = column(LANES * s);
            for t in 0..bars.len() {
                // Lane l sees the series shifted by l bars, so the lanes differ.
                let batch: Vec<(usize, BarInput)> = (0..LANES)
                    .map(|l| (l, bars[(t + 7 * l) % bars.len()]))
                    .collect();
                update_lanes(&template, &mut dense, &mut dense_slots, &batch, true);
                update_lanes(&template, &mut indexed, &mut indexed_slots, &batch, false);
                let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&dense), bits(&indexed), "{template:?} bar {t}");
                assert_eq!(
                    bits(&dense_slots),
                    bits(&indexed_slots),
                    "{template:?} bar {t}"
                );
            }
        }
    }
}
