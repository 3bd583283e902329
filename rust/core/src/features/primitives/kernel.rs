//! The kernel contract: closed bars in ([`BarInput`], or a block of them as a `BarsView` of
//! `f64`), raw outputs out ([`Outputs`]), and [`Owned`] for a kernel used on its own.

use crate::bars::BarsView;
use crate::features::primitives::block::{BlockBuffer, Inputs, BLOCK};
use crate::features::primitives::input::BarInput;
use crate::features::value::Raw;

/// The most outputs any kernel declares (Bollinger: mid, upper, lower, percent_b).
pub const MAX_OUTPUTS: usize = 4;

/// A kernel's raw outputs in declared order; slots past the declared count are `Undefined`.
pub type Outputs = [Raw; MAX_OUTPUTS];

/// An incremental indicator over closed bars.
///
/// A kernel's windows live in `f64` slots it is handed on every call that reads or writes them
/// ([`Self::slots`] of them, the same ones each time; see [`crate::features::primitives::ring`]): a
/// [`crate::features::FeatureState`] keeps every kernel's slots in one allocation, and [`Owned`]
/// gives one kernel its own.
pub trait Kernel {
    /// Window slots the kernel needs (0 for none).
    fn slots(&self) -> usize {
        0
    }

    /// Take one closed bar. O(1) amortised, no allocation.
    fn update(&mut self, slots: &mut [f64], bar: &BarInput);

    /// Take a block of closed bars, oldest first: the same state, bit for bit, as
    /// [`Self::update`] on each in turn. Kernels override it with a tight loop over the
    /// columns they read (the default is that loop over `update`).
    fn warm_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        for i in 0..block.len() {
            self.update(slots, &block.bar(i));
        }
    }

    /// Take a batch of closed bars, oldest first, through [`Self::warm_block`].
    fn warm(&mut self, slots: &mut [f64], bars: &[BarInput]) {
        let mut buffer = BlockBuffer::new();
        for chunk in bars.chunks(BLOCK) {
            self.warm_block(slots, &buffer.transpose(chunk));
        }
    }

    /// The bar fields this kernel reads (a batch may leave the others unset).
    fn inputs(&self) -> Inputs {
        Inputs::ALL
    }

    /// The current outputs in declared order (meaningful once warm).
    fn values(&self, slots: &[f64]) -> Outputs;

    /// Closed bars needed before the first value.
    fn warmup_bars(&self) -> u64;

    /// Closed bars seen since creation or the last reset.
    fn bars_seen(&self) -> u64;

    /// Forget every bar (the slots need no clearing: each window counts what it holds).
    fn reset(&mut self);
}

/// A kernel with slots of its own, to use one outside a [`crate::features::FeatureState`].
#[derive(Debug, Clone)]
pub struct Owned<K> {
    kernel: K,
    slots: Vec<f64>,
}

impl<K: Kernel> Owned<K> {
    /// `kernel` with its slots.
    #[must_use]
    pub fn new(kernel: K) -> Self {
        let slots = vec![0.0; kernel.slots()];
        Self { kernel, slots }
    }

    /// The kernel.
    #[must_use]
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// As [`Kernel::update`].
    pub fn update(&mut self, bar: &BarInput) {
        self.kernel.update(&mut self.slots, bar);
    }

    /// As [`Kernel::warm`].
    pub fn warm(&mut self, bars: &[BarInput]) {
        self.kernel.warm(&mut self.slots, bars);
    }

    /// As [`Kernel::values`].
    #[must_use]
    pub fn values(&self) -> Outputs {
        self.kernel.values(&self.slots)
    }

    /// As [`Kernel::warmup_bars`].
    #[must_use]
    pub fn warmup_bars(&self) -> u64 {
        self.kernel.warmup_bars()
    }

    /// As [`Kernel::bars_seen`].
    #[must_use]
    pub fn bars_seen(&self) -> u64 {
        self.kernel.bars_seen()
    }

    /// As [`Kernel::reset`].
    pub fn reset(&mut self) {
        self.kernel.reset();
    }
}

/// Outputs with only the first slot set.
#[must_use]
pub(crate) fn one(value: Raw) -> Outputs {
    [value, Raw::Undefined, Raw::Undefined, Raw::Undefined]
}

/// `Real(x)` when `x` is finite, else `Undefined`.
#[must_use]
pub(crate) fn real(x: f64) -> Raw {
    if x.is_finite() {
        Raw::Real(x)
    } else {
        Raw::Undefined
    }
}

/// A window length from a validated period (periods are bounded by the registry).
#[must_use]
pub(crate) fn len_of(period: u64) -> usize {
    usize::try_from(period).unwrap_or(usize::MAX)
}
