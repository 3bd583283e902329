//! One resolution's feature states for every instrument of a [`crate::features::Universe`], stored
//! kernel-major: for each kernel of the layout, one column of every instrument's packed words
//! (lane after lane) and one of every instrument's window slots. A lane is an instrument.
//!
//! At 00:00 UTC every resolution of every instrument closes at once. With a state per
//! instrument (one arena each), an update loaded its arena's lines from all over memory,
//! kernel after kernel, behind a dispatch per kernel. Here a resolution's updates run kernel
//! by kernel over the lanes that closed: each kernel's words are read as one stream in lane
//! order (which the hardware prefetcher follows), its slots a step of one window per lane,
//! and the dispatch happens once per kernel rather than once per kernel and instrument.
//!
//! A lane reads as a [`FeatureState`] ([`Lanes::gather`]) for rows and for rewarming from
//! the series; [`Lanes::scatter`] writes one back. The numerics are the state's: the same
//! kernels take the same bars in the same order, only their words live elsewhere.

use std::sync::Arc;

use crate::bars::Bar;
use crate::features::engine::layout::Layout;
use crate::features::engine::state::{convert_bar, visit_values, FeatureState, Meta};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::Kernel;
use crate::features::primitives::packed::Packed;
use crate::features::registry::kinds as dispatch;
use crate::features::value::FeatureValue;

/// One kernel's words and slots for every lane: lane `l` holds `words[l * w..][..w]` and
/// `slots[l * s..][..s]`.
#[derive(Debug, Clone, Default)]
struct Column {
    words: Vec<f64>,
    slots: Vec<f64>,
}

/// One resolution's states of every instrument (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Store {
    columns: Vec<Column>,
    meta: Vec<Meta>,
}

impl Store {
    /// Append `state` as the next lane.
    pub(crate) fn push(&mut self, state: &FeatureState) {
        let layout = state.layout();
        if self.columns.is_empty() {
            self.columns = vec![Column::default(); layout.kernels.len()];
        }
        let (words, slots) = state.arena().split_at(layout.words_len());
        for (column, placed) in self.columns.iter_mut().zip(&layout.kernels) {
            column.words.extend_from_slice(&words[placed.words.clone()]);
            column.slots.extend_from_slice(&slots[placed.slots.clone()]);
        }
        self.meta.push(state.meta());
    }

    /// Lane `l` as a state of its own.
    pub(crate) fn gather(&self, layout: &Arc<Layout>, l: usize) -> FeatureState {
        let mut arena = vec![0.0; layout.len()];
        let (words, slots) = arena.split_at_mut(layout.words_len());
        for (column, placed) in self.columns.iter().zip(&layout.kernels) {
            let (w, s) = (placed.words.len(), placed.slots.len());
            words[placed.words.clone()].copy_from_slice(&column.words[l * w..(l + 1) * w]);
            slots[placed.slots.clone()].copy_from_slice(&column.slots[l * s..(l + 1) * s]);
        }
        FeatureState::from_parts(Arc::clone(layout), arena, self.meta[l])
    }

    /// Visit lane `l`'s values as [`FeatureState::for_each_value`] does, read in place (no
    /// gathered copy): a minute close reads every changed row this way.
    pub(crate) fn for_each_value<'a>(
        &'a self,
        layout: &'a Arc<Layout>,
        l: usize,
        visit: impl FnMut(&'a str, FeatureValue),
    ) {
        let columns = &self.columns;
        let kernels = layout.kernels_with(move |k, placed| {
            let column = &columns[k];
            let (w, s) = (placed.words.len(), placed.slots.len());
            (
                &column.words[l * w..(l + 1) * w],
                &column.slots[l * s..(l + 1) * s],
            )
        });
        visit_values(kernels, self.meta[l].after_gap, visit);
    }

    /// The close time of lane `l`'s newest bar.
    pub(crate) fn last_ts_event(&self, l: usize) -> Option<u64> {
        self.meta[l].last_ts
    }

    /// Bars lane `l` has taken.
    pub(crate) fn bars_taken(&self, l: usize) -> u64 {
        self.meta[l].taken
    }

    /// Every lane, to read and update.
    pub(crate) fn lanes<'a>(&'a mut self, layout: &'a Arc<Layout>) -> Lanes<'a> {
        Lanes {
            layout,
            store: self,
        }
    }
}

/// A [`Store`]'s lanes, borrowed with their layout to read and update.
pub(crate) struct Lanes<'a> {
    layout: &'a Arc<Layout>,
    store: &'a mut Store,
}

/// Lane `l` of a kernel column of `width` values per lane.
fn lane(column: &mut [f64], width: usize, l: usize) -> &mut [f64] {
    &mut column[l * width..(l + 1) * width]
}

impl Lanes<'_> {
    /// The close time of lane `l`'s newest bar.
    pub(crate) fn last_ts_event(&self, l: usize) -> Option<u64> {
        self.store.meta[l].last_ts
    }

    /// Lane `l` as a state of its own.
    pub(crate) fn gather(&self, l: usize) -> FeatureState {
        self.store.gather(self.layout, l)
    }

    /// Write `state` (of this layout) back as lane `l`.
    pub(crate) fn scatter(&mut self, l: usize, state: &FeatureState) {
        let layout = self.layout;
        let (words, slots) = state.arena().split_at(layout.words_len());
        for (column, placed) in self.store.columns.iter_mut().zip(&layout.kernels) {
            lane(&mut column.words, placed.words.len(), l)
                .copy_from_slice(&words[placed.words.clone()]);
            lane(&mut column.slots, placed.slots.len(), l)
                .copy_from_slice(&slots[placed.slots.clone()]);
        }
        self.store.meta[l] = state.meta();
    }

    /// Restart every kernel of lane `l` (as [`FeatureState::mark_gap`]).
    pub(crate) fn mark_gap(&mut self, l: usize) {
        let layout = self.layout;
        for (column, placed) in self.store.columns.iter_mut().zip(&layout.kernels) {
            let words = lane(&mut column.words, placed.words.len(), l);
            let mut kernel = Packed::unpack(&placed.template, words);
            kernel.reset();
            kernel.pack(words);
        }
        self.store.meta[l].after_gap = true;
    }

    /// `bar` as lane `l`'s kernels read it (as [`FeatureState`] converts it).
    pub(crate) fn convert(&self, l: usize, bar: &Bar) -> BarInput {
        let meta = self.store.meta[l];
        convert_bar(self.layout.inputs, meta.price_scale, meta.size_scale, bar)
    }

    /// Each `(lane, bar)` of `batch` takes its bar (lanes at most once each, bars after
    /// their lane's newest, checked by the caller): kernel by kernel over the batch.
    pub(crate) fn take(&mut self, batch: &[(usize, BarInput)]) {
        let layout = self.layout;
        let dense = batch.iter().enumerate().all(|(i, &(l, _))| i == l);
        for (column, placed) in self.store.columns.iter_mut().zip(&layout.kernels) {
            dispatch::update_lanes(
                &placed.template,
                &mut column.words,
                &mut column.slots,
                batch,
                dense,
            );
        }
        for &(l, bar) in batch {
            let meta = &mut self.store.meta[l];
            meta.last_ts = Some(bar.ts_event);
            meta.taken += 1;
        }
    }
}
