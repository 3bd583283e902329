//! The rings a window kernel keeps: of closes ([`Ring`]) or of bars' fields ([`BarRing`]).
//! Either holds every entry its kernel took since its last reset (the newest ones), so a
//! kernel reading only its newest entries can read another kernel's ring of the same
//! [`Series`] instead of keeping one.

use std::fmt::Debug;

use crate::bars::BarsView;
use crate::features::primitives::bar_ring::{self, BarRing};
use crate::features::primitives::block::Inputs;
use crate::features::primitives::input::BarInput;
use crate::features::primitives::packed::Packed;
use crate::features::primitives::ring::Ring;

/// What a ring holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    /// The closes ([`Ring`]).
    Closes,
    /// The bars' high, low, close and volume ([`BarRing`]).
    Bars,
}

/// A kernel's ring, as a view reads it.
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

/// A ring of one entry per bar.
pub(crate) trait Entries: Copy + Debug + Packed {
    /// The bar fields an entry holds.
    const INPUTS: Inputs;

    /// An empty ring of at most `capacity` (at least 1) entries.
    fn new(capacity: usize) -> Self;

    /// Slots the ring needs.
    fn slots(&self) -> usize;

    /// Append `bar`'s entry, evicting the oldest once full.
    fn push(&mut self, slots: &mut [f64], bar: &BarInput);

    /// Push every bar of `block` in turn.
    fn push_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>);

    /// Forget every entry.
    fn clear(&mut self);

    /// As a [`Window`].
    fn window(self) -> Window;

    /// The ring of `window`, when it holds this kind of entry.
    fn of(window: Window) -> Option<Self>;
}

impl Entries for Ring {
    const INPUTS: Inputs = Inputs::CLOSE;

    fn new(capacity: usize) -> Self {
        Ring::new(capacity)
    }

    fn slots(&self) -> usize {
        Ring::slots(self)
    }

    #[inline(always)]
    fn push(&mut self, slots: &mut [f64], bar: &BarInput) {
        Ring::push(self, slots, bar.close);
    }

    fn push_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        self.push_slice(slots, block.close);
    }

    fn clear(&mut self) {
        Ring::clear(self);
    }

    fn window(self) -> Window {
        Window::Closes(self)
    }

    fn of(window: Window) -> Option<Self> {
        match window {
            Window::Closes(ring) => Some(ring),
            Window::Bars(_) => None,
        }
    }
}

impl Entries for BarRing {
    const INPUTS: Inputs = bar_ring::INPUTS;

    fn new(capacity: usize) -> Self {
        BarRing::new(capacity)
    }

    fn slots(&self) -> usize {
        BarRing::slots(self)
    }

    #[inline(always)]
    fn push(&mut self, slots: &mut [f64], bar: &BarInput) {
        BarRing::push(self, slots, bar);
    }

    fn push_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        BarRing::push_block(self, slots, block);
    }

    fn clear(&mut self) {
        BarRing::clear(self);
    }

    fn window(self) -> Window {
        Window::Bars(self)
    }

    fn of(window: Window) -> Option<Self> {
        match window {
            Window::Bars(ring) => Some(ring),
            Window::Closes(_) => None,
        }
    }
}
