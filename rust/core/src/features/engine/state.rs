//! Incremental feature state for one (instrument, resolution): one kernel per selected spec,
//! fed closed bars in strictly increasing `ts_event` order, read as a row keyed
//! `<feature_id>.<output_name>` (a [`BTreeMap`], so iteration order is the key order).
//!
//! A state is one `f64` arena (every kernel's packed mutable state, then every kernel's
//! window slots) beside a layout shared by the states of one feature list (the kernels'
//! parameters and places; see `layout.rs`): a bar's update touches a few adjacent cache
//! lines, and a copy of the state is one allocation.
//!
//! A refused call leaves the state as it was: bars are checked before the kernels take them. A
//! batch is checked and converted block by block into `f64` columns on the stack (one pass over the
//! mantissas, no allocation); a batch of several blocks is saved first and restored when a later
//! block is refused. Every kernel takes each block: the latency-bound recurrences (RSI, ATR, EMA,
//! MACD) together in one loop (`crate::features::primitives::recurrence`), the others each in its own
//! tight loop. A gap in the input ([`FeatureState::mark_gap`]) restarts every kernel: their windows
//! would otherwise span unobserved time. Until each is warm again it reports ABSENT `GAP_IN_INPUT`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::bars::{Bar, BarsError, BarsView};
use crate::decimal::MAX_SCALE;
use crate::features::engine::layout::Layout;
use crate::features::error::FeatureError;
use crate::features::primitives::block::{BlockBuffer, Inputs, BLOCK};
use crate::features::primitives::check::QuickCheck;
use crate::features::primitives::input::{pow10, BarInput};
use crate::features::primitives::kernel::Kernel;
use crate::features::registry::{Compiled, Registry};
use crate::features::value::FeatureValue;

/// A feature row: `<feature_id>.<output_name>` -> value, in key order.
pub type Row = BTreeMap<String, FeatureValue>;

/// The kernels of one instrument and resolution.
#[derive(Debug, Clone)]
pub struct FeatureState {
    layout: Arc<Layout>,
    /// The kernels' packed state and window slots (see [`crate::features::engine::layout`]).
    arena: Vec<f64>,
    meta: Meta,
}

/// What a state keeps beside its kernels' arena (a universe keeps it per lane; see
/// [`crate::features::engine::lanes`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    /// Restarted by a gap (every kernel is, together) rather than new.
    pub(crate) after_gap: bool,
    pub(crate) price_scale: u8,
    pub(crate) size_scale: u8,
    /// The close time of the newest bar taken.
    pub(crate) last_ts: Option<u64>,
    /// Bars taken since the state started (a gap does not restart it; [`FeatureState::reset`]
    /// does).
    pub(crate) taken: u64,
}

fn scale_of(what: &'static str, precision: i64) -> Result<u8, FeatureError> {
    u8::try_from(precision)
        .ok()
        .filter(|s| *s <= MAX_SCALE)
        .ok_or(BarsError::BadPrecision { what, precision }.into())
}

impl FeatureState {
    /// A state computing `features` for an instrument with these price and size scales.
    ///
    /// # Errors
    /// [`BarsError::BadPrecision`] for a scale outside `0..=18`.
    pub fn new(
        features: Vec<Arc<Compiled>>,
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, FeatureError> {
        Self::with_layout(Layout::new(features), price_scale, size_scale)
    }

    /// A state of `layout`'s features (shared with every other state of them).
    pub(crate) fn with_layout(
        layout: Arc<Layout>,
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, FeatureError> {
        let price_scale = scale_of("price", price_scale)?;
        let size_scale = scale_of("size", size_scale)?;
        Ok(Self {
            arena: layout.arena(),
            layout,
            meta: Meta {
                after_gap: false,
                price_scale,
                size_scale,
                last_ts: None,
                taken: 0,
            },
        })
    }

    /// A state for the features of `registry` named by `ids` (all of them for `None`).
    ///
    /// # Errors
    /// As [`Registry::select`] and [`Self::new`].
    pub fn from_registry<S: AsRef<str>>(
        registry: &Registry,
        ids: Option<&[S]>,
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, FeatureError> {
        Self::new(registry.select(ids)?, price_scale, size_scale)
    }

    /// The price scale bars are read at.
    #[must_use]
    pub fn price_scale(&self) -> u8 {
        self.meta.price_scale
    }

    /// The size scale volumes are read at.
    #[must_use]
    pub fn size_scale(&self) -> u8 {
        self.meta.size_scale
    }

    /// The close time of the newest bar taken, if any.
    #[must_use]
    pub fn last_ts_event(&self) -> Option<u64> {
        self.meta.last_ts
    }

    /// Bars taken since the state started (or was last [`reset`](Self::reset)).
    #[must_use]
    pub fn bars_taken(&self) -> u64 {
        self.meta.taken
    }

    /// The selected features, in selection order.
    pub fn features(&self) -> impl Iterator<Item = &Arc<Compiled>> {
        self.layout.features.iter()
    }

    fn check_order(
        &self,
        index: usize,
        ts_event: u64,
        previous: Option<u64>,
    ) -> Result<(), FeatureError> {
        match previous {
            Some(previous) if ts_event <= previous => Err(BarsError::Unsorted {
                index,
                ts_event,
                previous,
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// Check columns: equal lengths, strictly increasing after the state's last bar, and
    /// each bar consistent (low <= open, close <= high; volume >= 0).
    ///
    /// # Errors
    /// [`FeatureError::Bars`] naming the first offending index.
    pub fn validate(&self, columns: &BarsView<'_>) -> Result<(), FeatureError> {
        let n = columns.ts_event.len();
        let lengths = columns.column_lengths();
        if lengths.iter().any(|&l| l != n) {
            return Err(BarsError::LengthMismatch {
                expected: n,
                lengths: lengths.to_vec(),
            }
            .into());
        }
        // The usual batch is vouched for without a branch per bar; the scan below names the
        // first offending bar of any other.
        let mut check = QuickCheck::default();
        check.columns(columns, 0..n, self.meta.last_ts);
        if check.vouches() {
            return Ok(());
        }
        let mut previous = self.meta.last_ts;
        for i in 0..n {
            let ts = columns.ts_event[i];
            self.check_order(i, ts, previous)?;
            previous = Some(ts);
            if !columns.bar(i).is_consistent() {
                return Err(BarsError::InconsistentBar {
                    index: i,
                    ts_event: ts,
                }
                .into());
            }
        }
        Ok(())
    }

    /// The bar fields the selected kernels read.
    #[must_use]
    pub fn inputs(&self) -> Inputs {
        self.layout.inputs
    }

    /// Warm from columns of fixed-point bars in one call. Returns the number of bars taken.
    ///
    /// One pass per block of bars checks them and converts the fields the kernels read, then
    /// the kernels take the block. A batch of several blocks is taken as it is checked, so the
    /// state is saved first and restored when a later block is refused.
    ///
    /// # Errors
    /// As [`Self::validate`]; nothing is taken on error.
    pub fn warm_columns(&mut self, columns: &BarsView<'_>) -> Result<usize, FeatureError> {
        let n = columns.ts_event.len();
        let saved = (n > BLOCK).then(|| self.clone());
        if self.take_columns(columns, false) {
            return Ok(n);
        }
        if let Some(saved) = saved {
            *self = saved;
        }
        // The precise scan names the first offending bar, or finds the batch valid after all
        // (values beyond the quick check's range): then it is taken without the quick check.
        self.validate(columns)?;
        self.take_columns(columns, true);
        Ok(n)
    }

    /// Convert and take `columns` block by block; `false` (the block not taken) at the first
    /// block [`QuickCheck`] does not vouch for, unless the batch is `validated`.
    fn take_columns(&mut self, columns: &BarsView<'_>, validated: bool) -> bool {
        let n = columns.ts_event.len();
        if [
            columns.open,
            columns.high,
            columns.low,
            columns.close,
            columns.volume,
        ]
        .iter()
        .any(|column| column.len() != n)
        {
            return false;
        }
        let (inputs, ps, ss) = (self.inputs(), self.meta.price_scale, self.meta.size_scale);
        let mut buffer = BlockBuffer::new();
        let mut last_ts = self.meta.last_ts;
        let mut kernels = self.layout.unpacked(&mut self.arena);
        for from in (0..n).step_by(BLOCK) {
            let (block, vouched) = buffer.convert(columns, from..n, last_ts, inputs, ps, ss);
            if !(vouched || validated) {
                return false;
            }
            kernels.take_block(&block);
            last_ts = block.ts_event.last().copied().or(last_ts);
        }
        drop(kernels);
        self.meta.last_ts = last_ts;
        self.meta.taken += n as u64;
        true
    }

    /// Take one closed bar given as fixed-point mantissas.
    ///
    /// # Errors
    /// As [`Self::validate`] for a one-bar batch.
    pub fn update_raw(&mut self, bar: &Bar) -> Result<(), FeatureError> {
        let values = [bar.open, bar.high, bar.low, bar.close, bar.volume];
        let columns = values.each_ref().map(std::slice::from_ref);
        self.validate(&BarsView::new(
            std::slice::from_ref(&bar.ts_event),
            columns,
            None,
        ))?;
        self.take_validated(bar);
        Ok(())
    }

    /// [`Self::update_raw`] for a bar the caller has checked as [`Self::validate`] would.
    pub(crate) fn take_validated(&mut self, bar: &Bar) {
        let bar = convert_bar(
            self.layout.inputs,
            self.meta.price_scale,
            self.meta.size_scale,
            bar,
        );
        self.take_one(&bar);
    }

    /// A state of `layout` from its parts (a universe keeps its states in lanes; see
    /// [`crate::features::engine::lanes`]).
    pub(crate) fn from_parts(layout: Arc<Layout>, arena: Vec<f64>, meta: Meta) -> Self {
        Self {
            layout,
            arena,
            meta,
        }
    }

    /// The layout of the state's features.
    pub(crate) fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }

    /// The kernels' packed words and slots.
    pub(crate) fn arena(&self) -> &[f64] {
        &self.arena
    }

    /// What the state keeps beside its arena.
    pub(crate) fn meta(&self) -> Meta {
        self.meta
    }

    /// Every kernel takes one bar.
    fn take_one(&mut self, bar: &BarInput) {
        self.layout.update(&mut self.arena, bar);
        self.meta.last_ts = Some(bar.ts_event);
        self.meta.taken += 1;
    }

    /// Warm from bars already converted to `f64`, oldest first. Returns the number taken.
    ///
    /// # Errors
    /// [`BarsError::Unsorted`] when `ts_event` does not increase strictly; nothing is
    /// taken on error.
    pub fn warm(&mut self, bars: &[BarInput]) -> Result<usize, FeatureError> {
        let mut previous = self.meta.last_ts;
        for (i, bar) in bars.iter().enumerate() {
            self.check_order(i, bar.ts_event, previous)?;
            previous = Some(bar.ts_event);
        }
        self.take(bars);
        Ok(bars.len())
    }

    fn take(&mut self, bars: &[BarInput]) {
        if let [bar] = bars {
            self.take_one(bar);
            return;
        }
        let mut buffer = BlockBuffer::new();
        let mut kernels = self.layout.unpacked(&mut self.arena);
        for chunk in bars.chunks(BLOCK) {
            kernels.take_block(&buffer.transpose(chunk));
        }
        drop(kernels);
        if let Some(bar) = bars.last() {
            self.meta.last_ts = Some(bar.ts_event);
        }
        self.meta.taken += bars.len() as u64;
    }

    /// The input had a gap: restart every kernel. Values read ABSENT `GAP_IN_INPUT` until
    /// each kernel has seen its `warmupBars` again. Bars must still come after the last one.
    pub fn mark_gap(&mut self) {
        self.layout.each_kernel(&mut self.arena, Kernel::reset);
        self.meta.after_gap = true;
    }

    /// Forget every bar, as if new (the ordering check restarts too).
    pub fn reset(&mut self) {
        self.layout.each_kernel(&mut self.arena, Kernel::reset);
        self.meta.after_gap = false;
        self.meta.last_ts = None;
        self.meta.taken = 0;
    }
}

/// `bar` as kernels reading `inputs` see it: only the fields some kernel reads are
/// converted, each `raw / 10^scale` (see [`BarInput::from_raw`]).
pub(crate) fn convert_bar(inputs: Inputs, price_scale: u8, size_scale: u8, bar: &Bar) -> BarInput {
    let (p, s) = (pow10(price_scale), pow10(size_scale));
    let convert = |wanted: bool, raw: i64, divisor: f64| {
        if wanted {
            raw as f64 / divisor
        } else {
            0.0
        }
    };
    BarInput {
        ts_event: bar.ts_event,
        open: convert(inputs.open, bar.open, p),
        high: convert(inputs.high, bar.high, p),
        low: convert(inputs.low, bar.low, p),
        close: convert(inputs.close, bar.close, p),
        volume: convert(inputs.volume, bar.volume, s),
    }
}

mod values;

pub(crate) use values::visit_values;

#[cfg(test)]
mod tests;
