//! One loop over a block for the kernels whose batch cost is a recurrence's latency.
//!
//! Once seeded, RSI, ATR, EMA and MACD are recurrences on a few `f64`s, each bar waiting on
//! the previous one: Wilder's smoothing (RSI, ATR) on a multiply, an add and a division,
//! while its own work per bar is a handful of instructions. Run one after
//! another, their latencies add up; run in one loop, with every state in registers, the
//! out-of-order core overlaps them and the block costs about the longest chain. Each kernel's
//! own batch loop and its `update` run the same [`Step::step`], so a fused batch equals bar by
//! bar updates bit for bit.
//!
//! Only the first kernel of each kind joins the loop, once seeded; any other kernel (another
//! kind, a second of a kind, one still seeding) takes the block alone.

use crate::bars::BarsView;
use crate::features::kernels::average::ema::{Ema, EmaStep};
use crate::features::kernels::momentum::macd::{Macd, MacdStep};
use crate::features::kernels::momentum::rsi::{Rsi, RsiStep};
use crate::features::kernels::volatility::atr::{Atr, AtrStep};
use crate::features::primitives::recurrence::{Recurrence, Step};
use crate::features::registry::AnyKernel;

/// Bars `kernel` must take before it can join the fused loop (0 for kinds that never do).
#[must_use]
pub(crate) fn bars_to_seed(kernel: &AnyKernel) -> u64 {
    match kernel {
        AnyKernel::Rsi(k) => k.bars_to_seed(),
        AnyKernel::Atr(k) => k.bars_to_seed(),
        AnyKernel::Ema(k) => k.bars_to_seed(),
        AnyKernel::Macd(k) => k.bars_to_seed(),
        _ => 0,
    }
}

/// The kernels of one fused loop, each with its state taken out.
#[derive(Default)]
pub(crate) struct Fused<'k> {
    rsi: Option<(&'k mut Rsi, RsiStep)>,
    atr: Option<(&'k mut Atr, AtrStep)>,
    ema: Option<(&'k mut Ema, EmaStep)>,
    macd: Option<(&'k mut Macd, MacdStep)>,
}

/// Take a seeded `kernel` into `place`.
fn join<'k, K: Recurrence>(place: &mut Option<(&'k mut K, K::Step)>, kernel: &'k mut K) {
    *place = kernel.stepper().map(|step| (kernel, step));
}

impl<'k> Fused<'k> {
    /// Take `kernel` into the loop if it is seeded and the first of its kind; else give it
    /// back, to take the block alone.
    pub(crate) fn adopt(&mut self, kernel: &'k mut AnyKernel) -> Option<&'k mut AnyKernel> {
        let joins = match &*kernel {
            AnyKernel::Rsi(k) => self.rsi.is_none() && k.stepper().is_some(),
            AnyKernel::Atr(k) => self.atr.is_none() && k.stepper().is_some(),
            AnyKernel::Ema(k) => self.ema.is_none() && k.stepper().is_some(),
            AnyKernel::Macd(k) => self.macd.is_none() && k.stepper().is_some(),
            _ => false,
        };
        if !joins {
            return Some(kernel);
        }
        match kernel {
            AnyKernel::Rsi(k) => join(&mut self.rsi, k),
            AnyKernel::Atr(k) => join(&mut self.atr, k),
            AnyKernel::Ema(k) => join(&mut self.ema, k),
            AnyKernel::Macd(k) => join(&mut self.macd, k),
            _ => {}
        }
        None
    }

    /// Every adopted kernel takes `block`, in one loop; then each gets its state back.
    pub(crate) fn warm(self, block: &BarsView<'_, f64>) {
        let Self {
            mut rsi,
            mut atr,
            mut ema,
            mut macd,
        } = self;
        if rsi.is_none() && atr.is_none() && ema.is_none() && macd.is_none() {
            return;
        }
        let n = block.len();
        let (high, low, close) = (&block.high[..n], &block.low[..n], &block.close[..n]);
        for i in 0..n {
            let (h, l, c) = (high[i], low[i], close[i]);
            if let Some((_, step)) = &mut rsi {
                step.step(h, l, c);
            }
            if let Some((_, step)) = &mut atr {
                step.step(h, l, c);
            }
            if let Some((_, step)) = &mut ema {
                step.step(h, l, c);
            }
            if let Some((_, step)) = &mut macd {
                step.step(h, l, c);
            }
        }
        if let Some((kernel, step)) = rsi {
            kernel.resume(step, n);
        }
        if let Some((kernel, step)) = atr {
            kernel.resume(step, n);
        }
        if let Some((kernel, step)) = ema {
            kernel.resume(step, n);
        }
        if let Some((kernel, step)) = macd {
            kernel.resume(step, n);
        }
    }
}
