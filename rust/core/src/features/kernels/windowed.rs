//! The one window kernel: a ring of the last `len` entries (closes or bars) and a count of
//! bars taken. A bar's update is one entry written; what an indicator computes from its
//! window (`Statistic::values`) runs when a row is read, oldest entry first, so the same
//! values come out whether the kernel keeps its ring or reads a longer one another kernel
//! keeps (a view, `engine/layout.rs`): the same bits.

use std::fmt::Debug;

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Declared, Define, Params};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{len_of, Kernel, Outputs};
use crate::features::primitives::packed::{int, word, Packed};
use crate::features::primitives::window::{Entries, Window};

/// What an indicator computes from its window: the one part each window kernel writes.
pub(crate) trait Statistic: Copy + Debug {
    /// The ring it reads.
    type Entries: Entries;

    /// What its specs publish.
    const DECLARED: Declared;

    /// The kernel of a spec's parameters, checked in the order they are read.
    ///
    /// # Errors
    /// [`FeatureError::BadParameter`] for a missing or out-of-range parameter.
    fn build(params: &Params<'_>) -> Result<Windowed<Self>, FeatureError>;

    /// The outputs from the newest `len` entries of `entries` (fewer before warm).
    fn values(&self, entries: &Self::Entries, slots: &[f64], len: usize) -> Outputs;
}

/// A window kernel: `stat` over a ring of `len` entries (or, viewing, another kernel's ring
/// of at least `len`). Warm-up: `len` bars.
// `Statistic` stays crate-private (its signatures name the primitives' rings and the spec's
// parameters): the public kernel types are these aliases, built by their `new`.
#[allow(private_bounds)]
#[derive(Debug, Clone, Copy)]
pub struct Windowed<S: Statistic> {
    stat: S,
    entries: S::Entries,
    len: usize,
    seen: u64,
}

#[allow(private_bounds)]
impl<S: Statistic> Windowed<S> {
    /// A fresh kernel computing `stat` over the last `len` (at least 1) entries.
    #[must_use]
    pub fn with(stat: S, len: usize) -> Self {
        Self {
            stat,
            entries: S::Entries::new(len),
            len: len.max(1),
            seen: 0,
        }
    }

    /// What it computes.
    #[must_use]
    pub fn statistic(&self) -> &S {
        &self.stat
    }
}

/// A statistic with no parameter but its window's length, `period`.
pub(crate) trait OfPeriod: Statistic + Default {}

#[allow(private_bounds)]
impl<S: OfPeriod> Windowed<S> {
    /// A fresh kernel over the last `period` entries; `period` is at least 1 (validated by
    /// the registry).
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self::with(S::default(), len_of(period.max(1)))
    }
}

impl<S: Statistic> Kernel for Windowed<S> {
    fn slots(&self) -> usize {
        self.entries.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.entries.push(slots, bar);
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        self.entries.push_block(slots, block);
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        S::Entries::INPUTS
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        self.stat.values(&self.entries, slots, self.len)
    }

    fn warmup_bars(&self) -> u64 {
        self.len as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.entries.clear();
        self.seen = 0;
    }
}

impl<S: Statistic> Packed for Windowed<S> {
    const WORDS: usize = S::Entries::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        self.entries.pack(words);
        words[S::Entries::WORDS] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            entries: Packed::unpack(&template.entries, words),
            seen: int(words[S::Entries::WORDS]),
            ..*template
        }
    }
}

impl<S: Statistic> Define for Windowed<S> {
    const DECLARED: Declared = S::DECLARED;

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        S::build(params)
    }

    fn window(&self) -> Option<Window> {
        Some(self.entries.window())
    }

    fn viewing(&self, window: Window, seen: u64) -> Option<Self> {
        Some(Self {
            entries: S::Entries::of(window)?,
            seen,
            ..*self
        })
    }
}
