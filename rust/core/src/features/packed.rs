//! A kernel's mutable state as a few words in its [`super::FeatureState`]'s arena.
//!
//! A state's kernels are of different kinds and sizes: in a vector of the [`AnyKernel`] enum
//! each takes the largest kind's room (112 bytes), so a state's twelve default kernels span
//! 21 cache lines, while what changes per bar (sums, averages, counts, window heads) is
//! about 60 words. Packed side by side those are 8 lines, and the rest (periods, smoothing
//! factors, thresholds) stays in a template kernel per spec, one for every state built
//! from the same features (hot in cache however many states there are). A kernel is
//! unpacked from its words onto its template, updated, and packed back: a few register
//! moves against a cache miss per line saved when a coarse resolution's bar closes hours
//! after its last.
//!
//! Integers and flags travel as the bits of an `f64` ([`f64::from_bits`] is exact for every
//! pattern; the words are only copied, never computed on).

use super::atr::Atr;
use super::bollinger::Bollinger;
use super::donchian::Donchian;
use super::ema::Ema;
use super::macd::Macd;
use super::realized_vol::RealizedVol;
use super::registry::AnyKernel;
use super::roc::Roc;
use super::rsi::Rsi;
use super::sma::Sma;
use super::trend::Trend;
use super::volume_zscore::VolumeZscore;
use super::vwap::Vwap;
use super::{BarInput, Kernel};

/// A kernel (or a part of one) whose mutable state packs into `WORDS` words.
pub(crate) trait Packed: Sized {
    /// Words of mutable state.
    const WORDS: usize;

    /// Write the mutable state into `words` (at least `WORDS` long).
    fn pack(&self, words: &mut [f64]);

    /// `template` (a kernel of the same spec) with the mutable state read from `words`.
    fn unpack(template: &Self, words: &[f64]) -> Self;
}

/// An integer as a word.
#[inline]
pub(crate) fn word(x: u64) -> f64 {
    f64::from_bits(x)
}

/// A word as an integer.
#[inline]
pub(crate) fn int(word: f64) -> u64 {
    word.to_bits()
}

/// Two `u32`s as a word.
#[inline]
pub(crate) fn pair(low: u32, high: u32) -> f64 {
    word(u64::from(low) | u64::from(high) << 32)
}

/// A word as two `u32`s.
#[inline]
pub(crate) fn unpair(word: f64) -> (u32, u32) {
    let bits = int(word);
    (bits as u32, (bits >> 32) as u32)
}

const COUNT: u64 = (1 << 61) - 1;

/// A count of bars with three flags in its top bits (a count never nears 2^61: that many
/// one-minute bars span four trillion years).
#[inline]
pub(crate) fn tagged(count: u64, flags: [bool; 3]) -> f64 {
    let tags = flags
        .iter()
        .enumerate()
        .fold(0, |tags, (i, &flag)| tags | u64::from(flag) << (61 + i));
    word(count & COUNT | tags)
}

/// A word of [`tagged`] as the count and its flags.
#[inline]
pub(crate) fn untag(word: f64) -> (u64, [bool; 3]) {
    let bits = int(word);
    (bits & COUNT, [0, 1, 2].map(|i| bits >> (61 + i) & 1 == 1))
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
mod tests {
    use super::super::registry::{build_spec, default_registry};
    use super::super::testing::series;
    use super::super::KernelKind;
    use super::*;

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

    #[test]
    fn words_round_trip() {
        for (low, high) in [(0, 0), (1, u32::MAX), (u32::MAX, 7)] {
            assert_eq!(unpair(pair(low, high)), (low, high));
        }
        for count in [0, 1, 5_000, COUNT] {
            for flags in [[false; 3], [true, false, true], [true; 3]] {
                assert_eq!(untag(tagged(count, flags)), (count, flags));
            }
        }
        for x in [0, 1, u64::MAX, 0x7FF0_0000_0000_0001, 0xFFF8_0000_0000_0000] {
            assert_eq!(int(word(x)), x);
            let copied = [word(x)];
            assert_eq!(int(copied.to_vec()[0]), x);
        }
    }
}
