//! A kernel's mutable state as a few words in its [`crate::features::FeatureState`]'s arena.
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

#[cfg(test)]
mod tests {
    use super::*;

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
