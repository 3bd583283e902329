//! Bars in blocks of `f64` columns (a [`BarsView`] of `f64`), the batch form kernels warm
//! from. Columns that no kernel of a batch reads ([`crate::features::Kernel::inputs`]) may hold
//! anything.
//!
//! A batch is converted block by block into columns on the stack (`BlockBuffer`): each block stays
//! in L1 while every kernel reads it, nothing is allocated per batch, and only the columns some
//! kernel reads are converted ([`Inputs`]): each costs a division per bar. The same pass over the
//! mantissas checks them (`crate::features::primitives::check`), so their loads overlap the divisions.
//!
//! (Moving this work into the fused recurrences' loop, to hide it under their chains,
//! measured slower: the divider is not pipelined, so a conversion division it is busy with
//! when a recurrence's division is ready delays the chain, and that loop already issues
//! close to the core's width.)

use std::ops::Range;

use crate::bars::BarsView;
use crate::features::primitives::check::QuickCheck;
use crate::features::primitives::input::{pow10, BarInput};

/// The bar fields a kernel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    /// Reads the open.
    pub open: bool,
    /// Reads the high.
    pub high: bool,
    /// Reads the low.
    pub low: bool,
    /// Reads the close.
    pub close: bool,
    /// Reads the volume.
    pub volume: bool,
}

impl Inputs {
    /// Every field.
    pub const ALL: Self = Self {
        open: true,
        high: true,
        low: true,
        close: true,
        volume: true,
    };
    /// The close only.
    pub const CLOSE: Self = Self {
        open: false,
        high: false,
        low: false,
        close: true,
        volume: false,
    };
    /// High, low and close.
    pub const HIGH_LOW_CLOSE: Self = Self {
        high: true,
        low: true,
        ..Self::CLOSE
    };

    /// The fields either reads.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self {
            open: self.open | other.open,
            high: self.high | other.high,
            low: self.low | other.low,
            close: self.close | other.close,
            volume: self.volume | other.volume,
        }
    }
}

impl BarsView<'_, f64> {
    /// Bar `i` as one [`BarInput`] (for kernels taking a block bar by bar).
    ///
    /// # Panics
    /// When `i` is out of range or a column is shorter than `ts_event`.
    #[must_use]
    pub fn bar(&self, i: usize) -> BarInput {
        BarInput {
            ts_event: self.ts_event[i],
            open: self.open[i],
            high: self.high[i],
            low: self.low[i],
            close: self.close[i],
            volume: self.volume[i],
        }
    }
}

/// Bars per block: six columns of 256 values (12 KiB) stay in L1 beside the kernels' windows
/// while every kernel reads them.
pub(crate) const BLOCK: usize = 256;

/// Stack storage for one block of columns.
pub(crate) struct BlockBuffer {
    ts_event: [u64; BLOCK],
    open: [f64; BLOCK],
    high: [f64; BLOCK],
    low: [f64; BLOCK],
    close: [f64; BLOCK],
    volume: [f64; BLOCK],
}

impl BlockBuffer {
    pub(crate) fn new() -> Self {
        Self {
            ts_event: [0; BLOCK],
            open: [0.0; BLOCK],
            high: [0.0; BLOCK],
            low: [0.0; BLOCK],
            close: [0.0; BLOCK],
            volume: [0.0; BLOCK],
        }
    }

    /// The first [`BLOCK`] (at most) of `bars`, transposed into columns.
    pub(crate) fn transpose(&mut self, bars: &[BarInput]) -> BarsView<'_, f64> {
        let n = bars.len().min(BLOCK);
        for (i, bar) in bars[..n].iter().enumerate() {
            self.ts_event[i] = bar.ts_event;
            self.open[i] = bar.open;
            self.high[i] = bar.high;
            self.low[i] = bar.low;
            self.close[i] = bar.close;
            self.volume[i] = bar.volume;
        }
        self.block(n)
    }

    /// Bars `range` (at most [`BLOCK`] of them) of `columns`, the first after `last_ts`,
    /// checked ([`QuickCheck`]) and with the fields in `inputs` converted as
    /// [`BarInput::from_raw`] converts them (the same division); and whether the check
    /// vouches for them.
    pub(crate) fn convert(
        &mut self,
        columns: &BarsView<'_>,
        range: Range<usize>,
        last_ts: Option<u64>,
        inputs: Inputs,
        price_scale: u8,
        size_scale: u8,
    ) -> (BarsView<'_, f64>, bool) {
        let range = range.start..range.end.min(range.start + BLOCK);
        let n = range.len();
        let (p, s) = (pow10(price_scale), pow10(size_scale));
        let r = range.clone();
        let mut check = match (inputs.high | inputs.low, inputs.close) {
            (true, true) => self.check_and_convert::<true, true>(columns, r, p),
            (true, false) => self.check_and_convert::<true, false>(columns, r, p),
            (false, true) => self.check_and_convert::<false, true>(columns, r, p),
            (false, false) => self.check_and_convert::<false, false>(columns, r, p),
        };
        check.times(&columns.ts_event[range.clone()], last_ts);
        self.ts_event[..n].copy_from_slice(&columns.ts_event[range.clone()]);
        for (wanted, to, from, divisor) in [
            (inputs.open, &mut self.open, columns.open, p),
            (inputs.volume, &mut self.volume, columns.volume, s),
        ] {
            if wanted {
                for (to, &from) in to[..n].iter_mut().zip(&from[range.clone()]) {
                    *to = from as f64 / divisor;
                }
            }
        }
        (self.block(n), check.vouches())
    }

    /// Check bars `range` and convert the price columns wanted, in one loop (so the loads
    /// of the mantissas overlap the divisions) that the compiler vectorizes: a variant per
    /// set of price columns.
    fn check_and_convert<const HIGH_LOW: bool, const CLOSE: bool>(
        &mut self,
        columns: &BarsView<'_>,
        range: Range<usize>,
        p: f64,
    ) -> QuickCheck {
        let n = range.len();
        let bars = columns.slice(range);
        let (o, h, l, c, v) = (bars.open, bars.high, bars.low, bars.close, bars.volume);
        let (high, low, close) = (
            &mut self.high[..n],
            &mut self.low[..n],
            &mut self.close[..n],
        );
        let mut check = QuickCheck::default();
        for i in 0..n {
            check.bar(o[i], h[i], l[i], c[i], v[i]);
            if HIGH_LOW {
                high[i] = h[i] as f64 / p;
                low[i] = l[i] as f64 / p;
            }
            if CLOSE {
                close[i] = c[i] as f64 / p;
            }
        }
        check
    }

    fn block(&self, n: usize) -> BarsView<'_, f64> {
        BarsView {
            ts_event: &self.ts_event[..n],
            open: &self.open[..n],
            high: &self.high[..n],
            low: &self.low[..n],
            close: &self.close[..n],
            volume: &self.volume[..n],
            sequence: None,
        }
    }
}
