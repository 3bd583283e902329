//! Where a [`crate::features::FeatureState`]'s kernels live: one `f64` arena per state holding
//! every kernel's packed mutable state ([`crate::features::primitives::packed`]) and then every
//! kernel's window slots ([`crate::features::primitives::ring`]), and one [`Layout`] shared by every
//! state built from the same features: the specs, a template kernel per spec (its parameters), and
//! each kernel's place in the arena.
//!
//! A bar's update walks the layout (hot in cache, however many states share it) and touches
//! only the arena: the packed words (about eight cache lines for the default registry) and
//! one line per window.
//!
//! A feature whose values are a function of its newest closes alone (SMA, ROC, Bollinger,
//! realised volatility), or of its newest bars' fields alone (VWAP, Donchian, the volume
//! z-score), keeps no state when another kernel of the layout keeps a ring of at least as
//! many (see [`reads_of`] for which): it is a view, read from that kernel's ring and bar
//! count, and no bar updates it. In the default registry the four closes readers view the
//! 200-bar trend's closes, and VWAP and Donchian the z-score's ring of bars, which takes six
//! of twelve kernels out of every update (`docs/performance.md`). A view and a kernel of
//! its own read the same values in the same order: the same bits. That matters most at the
//! top of a day, when every resolution of every instrument closes at once and each coarse
//! state was last touched hours ago.

use std::ops::Range;
use std::sync::Arc;

use crate::bars::BarsView;
use crate::features::engine::fused::{self, Fused};
use crate::features::primitives::block::Inputs;
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::Kernel;
use crate::features::primitives::packed::Packed;
use crate::features::primitives::window::Series;
use crate::features::registry::kinds as dispatch;
use crate::features::registry::{AnyKernel, Compiled};

/// One kernel's template and place in the arena.
#[derive(Debug)]
pub(crate) struct Placed {
    /// A fresh kernel of the spec: the parameters every state shares.
    pub(crate) template: AnyKernel,
    /// Its words in an arena.
    pub(crate) words: Range<usize>,
    /// Its slots, from the start of an arena's slots.
    pub(crate) slots: Range<usize>,
}

/// How a feature's values are read.
#[derive(Debug)]
enum Read {
    /// From the kernel at this index of [`Layout::kernels`].
    Kernel(usize),
    /// A view: this template reading the ring of the kernel at `source`.
    View { template: AnyKernel, source: usize },
}

/// The shared part of every state computing one list of features (see the module docs).
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) features: Vec<Arc<Compiled>>,
    /// The kernels that take bars (every feature but the views), in feature order.
    pub(crate) kernels: Vec<Placed>,
    /// Per feature, where its values come from.
    reads: Vec<Read>,
    /// The bar fields some kernel reads.
    pub(crate) inputs: Inputs,
    /// Words of packed state (the slots follow them).
    words: usize,
    /// Arena length.
    len: usize,
}

impl Layout {
    /// The layout of `features`: words first (kernel after kernel), then slots; views (see
    /// the module docs) take neither.
    pub(crate) fn new(features: Vec<Arc<Compiled>>) -> Arc<Self> {
        let templates: Vec<AnyKernel> = features.iter().map(|f| f.kernel()).collect();
        let inputs = templates.iter().fold(Inputs::default(), |all, template| {
            all.union(template.inputs())
        });
        let (reads, kept) = reads_of(&templates);
        let total = kept.iter().map(dispatch::words).sum::<usize>();
        let (mut words, mut slots) = (0, 0);
        let kernels = kept
            .into_iter()
            .map(|template| {
                let (w, s) = (dispatch::words(&template), template.slots());
                let placed = Placed {
                    template,
                    words: words..words + w,
                    slots: slots..slots + s,
                };
                (words, slots) = (words + w, slots + s);
                placed
            })
            .collect::<Vec<_>>();
        Arc::new(Self {
            features,
            kernels,
            reads,
            inputs,
            words: total,
            len: total + slots,
        })
    }

    /// Words of packed state in an arena (its slots start there).
    pub(crate) fn words_len(&self) -> usize {
        self.words
    }

    /// Arena length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// An arena of fresh kernels.
    pub(crate) fn arena(&self) -> Vec<f64> {
        let mut arena = vec![0.0; self.len];
        for placed in &self.kernels {
            Packed::pack(&placed.template, &mut arena[placed.words.clone()]);
        }
        arena
    }

    /// Every kernel takes `bar`.
    #[inline]
    pub(crate) fn update(&self, arena: &mut [f64], bar: &BarInput) {
        let (words, slots) = arena.split_at_mut(self.words);
        for placed in &self.kernels {
            dispatch::update(
                &placed.template,
                &mut words[placed.words.clone()],
                &mut slots[placed.slots.clone()],
                bar,
            );
        }
    }

    /// Each feature's kernel unpacked (a view: reading its source's ring), with its spec
    /// and slots, in feature order (to read values).
    pub(crate) fn kernels<'a>(
        &'a self,
        arena: &'a [f64],
    ) -> impl Iterator<Item = (&'a Compiled, AnyKernel, &'a [f64])> {
        let (words, slots) = arena.split_at(self.words);
        self.kernels_with(move |_, placed| {
            (&words[placed.words.clone()], &slots[placed.slots.clone()])
        })
    }

    /// [`Self::kernels`] with kernel `k`'s words and slots found by `place` (a universe's
    /// lanes keep them in columns, see [`crate::features::engine::lanes`]).
    pub(crate) fn kernels_with<'a>(
        &'a self,
        place: impl Fn(usize, &'a Placed) -> (&'a [f64], &'a [f64]) + 'a,
    ) -> impl Iterator<Item = (&'a Compiled, AnyKernel, &'a [f64])> {
        let unpack = move |k: usize| {
            let placed = &self.kernels[k];
            let (words, slots) = place(k, placed);
            (Packed::unpack(&placed.template, words), slots)
        };
        self.reads
            .iter()
            .zip(&self.features)
            .map(move |(read, compiled)| {
                let (kernel, slots) = match read {
                    Read::Kernel(k) => unpack(*k),
                    Read::View { template, source } => {
                        let (source, slots) = unpack(*source);
                        (template.viewing(&source).unwrap_or(*template), slots)
                    }
                };
                (&**compiled, kernel, slots)
            })
    }

    /// Apply `change` to every kernel (unpacked, then packed back).
    pub(crate) fn each_kernel(&self, arena: &mut [f64], mut change: impl FnMut(&mut AnyKernel)) {
        for placed in &self.kernels {
            let words = &mut arena[placed.words.clone()];
            let mut kernel = Packed::unpack(&placed.template, words);
            change(&mut kernel);
            kernel.pack(words);
        }
    }

    /// The kernels unpacked, to take blocks ([`Unpacked::take_block`]) and pack once.
    pub(crate) fn unpacked<'a>(&'a self, arena: &'a mut [f64]) -> Unpacked<'a> {
        let (words, slots) = arena.split_at_mut(self.words);
        let kernels = self
            .kernels
            .iter()
            .map(|placed| Packed::unpack(&placed.template, &words[placed.words.clone()]))
            .collect();
        Unpacked {
            layout: self,
            words,
            slots,
            kernels,
        }
    }
}

/// How each of `templates` is read, and the templates that keep state (in order). For each
/// series ([`Series`]), one kernel keeping a ring of it is the source: one long enough for
/// every reader if any, else the longest; among those, one that keeps state anyway (the
/// trend) before one that could itself view; then the longest, then the first. Every kind
/// that reads only its newest entries of that series ([`AnyKernel::reads`]), and no more
/// than the source's ring holds, views it.
fn reads_of(templates: &[AnyKernel]) -> (Vec<Read>, Vec<AnyKernel>) {
    let source_of = |series: Series| {
        let reading = |t: &AnyKernel| t.reads().filter(|&(s, _)| s == series);
        let most = templates
            .iter()
            .filter_map(&reading)
            .map(|(_, n)| n)
            .max()?;
        templates
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let (window, _) = t.window()?;
                let held = (window.series() == series).then(|| window.capacity())?;
                let rank = (held >= most, reading(t).is_none(), held);
                Some((rank, std::cmp::Reverse(i)))
            })
            .max()
            .map(|((_, _, held), std::cmp::Reverse(i))| (i, held))
    };
    let sources = [Series::Closes, Series::Bars].map(|series| (series, source_of(series)));
    // The source a template views, if any.
    let source = |i: usize, template: &AnyKernel| {
        let (series, read) = template.reads()?;
        let (_, found) = sources.iter().find(|(s, _)| *s == series)?;
        let (s, held) = (*found)?;
        (s != i && read <= held).then_some(s)
    };
    let kept: Vec<AnyKernel> = templates
        .iter()
        .enumerate()
        .filter(|&(i, t)| source(i, t).is_none())
        .map(|(_, t)| *t)
        .collect();
    // A kept kernel's index among the kept ones.
    let place = |i: usize| {
        (0..i)
            .filter(|&j| source(j, &templates[j]).is_none())
            .count()
    };
    let reads = templates
        .iter()
        .enumerate()
        .map(|(i, template)| match source(i, template) {
            Some(s) => Read::View {
                template: *template,
                source: place(s),
            },
            None => Read::Kernel(place(i)),
        })
        .collect();
    (reads, kept)
}

/// A state's kernels taken out of their words for a batch; packed back on drop.
pub(crate) struct Unpacked<'a> {
    layout: &'a Layout,
    words: &'a mut [f64],
    slots: &'a mut [f64],
    kernels: Vec<AnyKernel>,
}

impl Unpacked<'_> {
    /// Every kernel takes `block`: the recurrences together in one loop
    /// ([`crate::features::engine::fused`]), the others alone.
    pub(crate) fn take_block(&mut self, block: &BarsView<'_, f64>) {
        // Kernels still seeding (a state's first bars) take them alone, so that every
        // recurrence can join the loop for the rest of the block.
        let seeding = self
            .kernels
            .iter()
            .map(fused::bars_to_seed)
            .max()
            .map_or(0, |n| {
                usize::try_from(n).map_or(block.len(), |n| n.min(block.len()))
            });
        if seeding > 0 {
            let first = block.slice(0..seeding);
            for (kernel, slots) in each(&mut self.kernels, &mut *self.slots) {
                kernel.warm_block(slots, &first);
            }
        }
        let rest = block.tail(seeding);
        let mut together = Fused::default();
        for (kernel, slots) in each(&mut self.kernels, &mut *self.slots) {
            if let Some(alone) = together.adopt(kernel) {
                alone.warm_block(slots, &rest);
            }
        }
        together.warm(&rest);
    }
}

impl Drop for Unpacked<'_> {
    fn drop(&mut self) {
        for (placed, kernel) in self.layout.kernels.iter().zip(&self.kernels) {
            kernel.pack(&mut self.words[placed.words.clone()]);
        }
    }
}

/// Each kernel with its window slots (laid out kernel after kernel).
fn each<'a>(
    kernels: &'a mut [AnyKernel],
    slots: &'a mut [f64],
) -> impl Iterator<Item = (&'a mut AnyKernel, &'a mut [f64])> {
    let mut rest = slots;
    kernels.iter_mut().map(move |kernel| {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(kernel.slots());
        rest = tail;
        (kernel, mine)
    })
}
