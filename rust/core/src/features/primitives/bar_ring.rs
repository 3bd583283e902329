//! A ring of bars' `(high, low, close, volume)`: the window of every feature that is a
//! function of its newest bars' fields alone (VWAP, Donchian, the volume z-score). Each of
//! them keeps one, or, with a long enough one in its layout, reads that one (`layout.rs`):
//! every such ring holds the same four fields, so any of them serves any of these readers.
//!
//! A bar's push writes one entry of four adjacent slots (half a cache line); what the
//! features compute from the window (sums, extremes, moments) is computed when a row is
//! read, oldest entry first, so a feature reads the same values in the same order however
//! its ring is shared: the same bits.

use crate::bars::BarsView;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::input::BarInput;
use crate::features::primitives::packed::Packed;
use crate::features::primitives::ring::Ring;

/// Where each field sits in an entry.
pub(crate) const HIGH: usize = 0;
pub(crate) const LOW: usize = 1;
pub(crate) const CLOSE: usize = 2;
pub(crate) const VOLUME: usize = 3;
/// Slots per entry.
const WIDTH: usize = 4;

/// The fields a ring's kernel reads.
pub(crate) const INPUTS: Inputs = Inputs {
    open: false,
    high: true,
    low: true,
    close: true,
    volume: true,
};

/// A ring of the last `capacity` bars, `WIDTH` slots each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BarRing {
    entries: Ring,
}

impl BarRing {
    /// An empty ring of at most `capacity` (at least 1) bars.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: Ring::new(capacity),
        }
    }

    /// Bars it can hold.
    pub(crate) fn capacity(&self) -> usize {
        self.entries.slots()
    }

    /// Slots the ring needs.
    pub(crate) fn slots(&self) -> usize {
        WIDTH * self.capacity()
    }

    /// Append `bar`, evicting the oldest once full.
    #[inline(always)]
    pub(crate) fn push(&mut self, slots: &mut [f64], bar: &BarInput) {
        let at = WIDTH * self.entries.claim();
        slots[at..at + WIDTH].copy_from_slice(&[bar.high, bar.low, bar.close, bar.volume]);
    }

    /// Push every bar of `block` in turn: only the last `capacity` are written (the others
    /// would be overwritten), where pushing each would leave them.
    pub(crate) fn push_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        let skipped = block.len().saturating_sub(self.capacity());
        self.entries.skip(skipped);
        let kept = block.tail(skipped);
        for i in 0..kept.len() {
            let at = WIDTH * self.entries.claim();
            slots[at..at + WIDTH].copy_from_slice(&[
                kept.high[i],
                kept.low[i],
                kept.close[i],
                kept.volume[i],
            ]);
        }
    }

    /// The newest `n` entries held (all of them when fewer), oldest first.
    pub(crate) fn newest<'s>(
        &self,
        slots: &'s [f64],
        n: usize,
    ) -> impl Iterator<Item = &'s [f64]> + Clone + 's {
        self.entries
            .newest_at(n)
            .map(move |i| &slots[WIDTH * i..WIDTH * (i + 1)])
    }

    /// Bars held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Forget every bar.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}

impl Packed for BarRing {
    const WORDS: usize = Ring::WORDS;

    fn pack(&self, words: &mut [f64]) {
        self.entries.pack(words);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            entries: Packed::unpack(&template.entries, words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::testing::series;

    /// A block pushed at once leaves the ring as pushing its bars one by one, whatever the
    /// ring held before and however long the block.
    #[test]
    fn blocks_equal_pushes() {
        let bars = series(300);
        let mut buffer = crate::features::primitives::block::BlockBuffer::new();
        for capacity in [1, 2, 7, 20] {
            for chunk in [1, 3, 7, 20, 21, 64] {
                let (mut one, mut many) = (BarRing::new(capacity), BarRing::new(capacity));
                let (mut one_slots, mut many_slots) =
                    (vec![0.0; 4 * capacity], vec![0.0; 4 * capacity]);
                for part in bars.chunks(chunk) {
                    part.iter().for_each(|bar| one.push(&mut one_slots, bar));
                    many.push_block(&mut many_slots, &buffer.transpose(part));
                    let entries = |ring: &BarRing, slots: &[f64]| -> Vec<Vec<f64>> {
                        ring.newest(slots, capacity).map(<[f64]>::to_vec).collect()
                    };
                    assert_eq!(one.len(), many.len());
                    assert_eq!(
                        entries(&one, &one_slots),
                        entries(&many, &many_slots),
                        "{capacity} {chunk}"
                    );
                }
                let newest = one.newest(&one_slots, 1).next().map(<[f64]>::to_vec);
                let last = bars[bars.len() - 1];
                assert_eq!(
                    newest,
                    Some(vec![last.high, last.low, last.close, last.volume])
                );
            }
        }
    }
}
