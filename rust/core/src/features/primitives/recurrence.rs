//! A kernel whose batch cost is a recurrence's latency: once seeded, RSI, ATR, EMA and MACD
//! are recurrences on a few `f64`s ([`Step`]), each bar waiting on the previous one. Each
//! kernel's own batch loop and its `update` run the same [`Step::step`], so the engine's
//! fused loop (`engine/fused.rs`) equals bar by bar updates bit for bit.

use crate::bars::BarsView;
use crate::features::primitives::input::BarInput;

use crate::features::primitives::kernel::Kernel;

/// A seeded kernel's recurrence state, small and `Copy` so a loop keeps it in registers.
pub(crate) trait Step: Copy {
    /// Take one bar (the fields the kernel reads).
    fn step(&mut self, high: f64, low: f64, close: f64);
}

/// A kernel that becomes a [`Step`] recurrence after its first bars.
pub(crate) trait Recurrence: Kernel {
    /// The recurrence state.
    type Step: Step;

    /// Bars still to take one by one before [`Self::stepper`] is `Some`.
    fn bars_to_seed(&self) -> u64;

    /// The recurrence state once seeded.
    fn stepper(&self) -> Option<Self::Step>;

    /// Store the state back after `step` took `taken` more bars.
    fn resume(&mut self, step: Self::Step, taken: usize);
}

/// `update` for a seeded kernel: one [`Step::step`]; `false` while seeding (nothing taken).
#[inline]
pub(crate) fn update_seeded<K: Recurrence>(kernel: &mut K, bar: &BarInput) -> bool {
    let Some(mut step) = kernel.stepper() else {
        return false;
    };
    step.step(bar.high, bar.low, bar.close);
    kernel.resume(step, 1);
    true
}

/// `warm_block` for one kernel: bar by bar while seeding, then its recurrence alone.
pub(crate) fn warm_alone<K: Recurrence>(kernel: &mut K, block: &BarsView<'_, f64>) {
    let seeding =
        usize::try_from(kernel.bars_to_seed()).map_or(block.len(), |n| n.min(block.len()));
    for i in 0..seeding {
        // Recurrences keep no window: their slots are empty.
        kernel.update(&mut [], &block.bar(i));
    }
    let rest = block.tail(seeding);
    let Some(mut step) = kernel.stepper() else {
        return;
    };
    for ((&high, &low), &close) in rest.high.iter().zip(rest.low).zip(rest.close) {
        step.step(high, low, close);
    }
    kernel.resume(step, rest.len());
}
