//! The one list of kernels ([`kinds!`] at the bottom): every enum, dispatch and default list
//! is generated from it. [`KernelKind`] names a kind; [`AnyKernel`] holds one kernel of any
//! kind and dispatches to it through one inlined `match` (no dynamic dispatch); the packed
//! updates ([`update`], [`update_lanes`]) dispatch once per bar or batch.

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::kernels::{average, momentum, volatility, volume};
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Bound, DefaultSpec, Define, OutputTable, Params};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{Kernel, Outputs};
use crate::features::primitives::packed::Packed;
use crate::features::primitives::window::Window;

/// Unpack, update, pack back.
#[inline(always)]
fn step<K: Kernel + Packed>(template: &K, words: &mut [f64], slots: &mut [f64], bar: &BarInput) {
    let mut kernel = K::unpack(template, words);
    kernel.update(slots, bar);
    kernel.pack(words);
}

/// A kind's declared facts.
macro_rules! declared {
    ($ty:ty, $fact:ident) => {
        <$ty as Define>::DECLARED.$fact
    };
}

/// The kinds, in registry order: `Variant(KernelType)`, one per kernel file.
macro_rules! kinds {
    ($($kind:ident($ty:ty)),* $(,)?) => {
        /// The kernels this crate implements.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum KernelKind {
            $(#[doc = concat!("[`", stringify!($ty), "`].")] $kind,)*
        }

        impl KernelKind {
            /// Every kernel, in registry order.
            pub const ALL: [Self; [$(stringify!($kind)),*].len()] = [$(Self::$kind),*];

            /// The `implementation` string of specs computed by this kernel.
            #[must_use]
            pub const fn implementation(self) -> &'static str {
                match self {
                    $(Self::$kind => declared!($ty, implementation),)*
                }
            }

            /// Declared outputs: name, value type, scale.
            pub(crate) const fn outputs(self) -> OutputTable {
                match self {
                    $(Self::$kind => declared!($ty, outputs),)*
                }
            }

            /// Parameter names the kernel accepts besides the optional `threshold`.
            pub(crate) const fn parameter_names(self) -> &'static [&'static str] {
                match self {
                    $(Self::$kind => declared!($ty, parameters),)*
                }
            }

            /// How an optional `threshold` is bounded.
            pub(crate) const fn threshold(self) -> Bound {
                match self {
                    $(Self::$kind => declared!($ty, threshold),)*
                }
            }

            /// The kind's specs in the default registry.
            pub(crate) const fn defaults(self) -> &'static [DefaultSpec] {
                match self {
                    $(Self::$kind => declared!($ty, defaults),)*
                }
            }

            /// A fresh kernel of this kind from a spec's parameters.
            pub(crate) fn build(self, params: &Params<'_>) -> Result<AnyKernel, FeatureError> {
                Ok(match self {
                    $(Self::$kind => AnyKernel::$kind(<$ty as Define>::build(params)?),)*
                })
            }
        }

        /// One kernel of any kind: static dispatch through a `match`.
        #[derive(Debug, Clone, Copy)]
        #[allow(missing_docs)]
        pub enum AnyKernel {
            $($kind($ty),)*
        }

        /// `$body` with `$k` bound to the kernel, whatever its kind.
        macro_rules! dispatch {
            ($self:ident, $k:ident => $body:expr) => {
                match $self {
                    $(AnyKernel::$kind($k) => $body,)*
                }
            };
        }

        impl AnyKernel {
            /// The kind.
            #[must_use]
            pub fn kind(&self) -> KernelKind {
                match self {
                    $(Self::$kind(_) => KernelKind::$kind,)*
                }
            }

            /// The ring this kernel keeps of every bar (or close) it took since its last
            /// reset, and how many bars it took: what a view reads ([`Self::viewing`]).
            /// `None` for kinds that keep no such ring.
            pub(crate) fn window(&self) -> Option<(Window, u64)> {
                let window = dispatch!(self, k => Define::window(k))?;
                Some((window, self.bars_seen()))
            }

            /// This template reading `window` (another kernel's ring) as its own, after
            /// `seen` bars; `None` when it cannot.
            pub(crate) fn view(&self, window: Window, seen: u64) -> Option<AnyKernel> {
                match self {
                    $(Self::$kind(k) => k.viewing(window, seen).map(Self::$kind),)*
                }
            }
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

            fn warm_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
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

        impl Packed for AnyKernel {
            /// The most words of any kind.
            const WORDS: usize = {
                let mut most = 0;
                $(if <$ty as Packed>::WORDS > most {
                    most = <$ty as Packed>::WORDS;
                })*
                most
            };

            fn pack(&self, words: &mut [f64]) {
                dispatch!(self, k => k.pack(words));
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
                $(AnyKernel::$kind(_) => <$ty as Packed>::WORDS,)*
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
            dispatch!(template, template => step(template, words, slots, bar));
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
                    update_column(template, words, slots, batch, dense);
                })*
            }
        }
    };
}

/// [`update_lanes`] for one kind.
#[inline(always)]
fn update_column<K: Kernel + Packed>(
    template: &K,
    words: &mut [f64],
    slots: &mut [f64],
    batch: &[(usize, BarInput)],
    dense: bool,
) {
    let (w, s) = (K::WORDS, template.slots());
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
}

kinds!(
    Sma(average::sma::Sma),
    Ema(average::ema::Ema),
    Rsi(momentum::rsi::Rsi),
    Atr(volatility::atr::Atr),
    Bollinger(volatility::bollinger::Bollinger),
    Macd(momentum::macd::Macd),
    Roc(momentum::roc::Roc),
    RealizedVol(volatility::realized_vol::RealizedVol),
    VolumeZscore(volume::volume_zscore::VolumeZscore),
    Vwap(average::vwap::Vwap),
    Donchian(volatility::donchian::Donchian),
    Trend(momentum::trend::Trend),
    Stochastic(momentum::stochastic::Stochastic),
);
