//! What a view needs of [`AnyKernel`]: which ring a kernel reads, and a template reading
//! another kernel's ring (see `engine/layout.rs`).

use crate::features::primitives::window::Series;
use crate::features::registry::AnyKernel;

impl AnyKernel {
    /// For a kind whose values are a function of its newest entries of one ring alone: that
    /// ring's series and how many entries it reads. Such a kernel can view another's ring of
    /// at least that many instead of keeping its own. `None` for the other kinds.
    pub(crate) fn reads(&self) -> Option<(Series, usize)> {
        let (window, seen) = self.window()?;
        self.view(window, seen)?;
        Some((window.series(), window.capacity()))
    }

    /// This template reading `source`'s ring ([`Self::window`]) as its own, with its bars
    /// seen; `None` when either kind cannot.
    pub(crate) fn viewing(&self, source: &AnyKernel) -> Option<AnyKernel> {
        self.reads()?;
        let (window, seen) = source.window()?;
        self.view(window, seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::input::BarInput;
    use crate::features::primitives::kernel::Kernel;
    use crate::features::primitives::packed::Packed;
    use crate::features::primitives::testing::series;
    use crate::features::registry::kinds::{update_lanes, words};
    use crate::features::registry::{build_spec, default_registry, KernelKind};

    #[test]
    fn every_kind_unpacks_to_what_it_packed() {
        let mut templates: Vec<AnyKernel> = default_registry()
            .features()
            .iter()
            .map(|f| f.kernel())
            .collect();
        // A second spec of a kind: parameters come from the template, not the words.
        let other = build_spec(
            KernelKind::Macd,
            "m",
            &[("fast", "3"), ("slow", "5"), ("signal", "2")],
        );
        templates.extend(other.map(|c| c.kernel()));
        for template in templates {
            let mut kernel = template;
            let mut slots = vec![0.0; kernel.slots()];
            let mut packed = vec![0.0; words(&kernel)];
            assert!(packed.len() <= AnyKernel::WORDS);
            for (i, bar) in series(90).iter().enumerate() {
                if i % 41 == 40 {
                    kernel.reset();
                }
                kernel.update(&mut slots, bar);
                kernel.pack(&mut packed);
                let back = AnyKernel::unpack(&template, &packed);
                assert_eq!(format!("{back:?}"), format!("{kernel:?}"), "bar {i}");
            }
        }
    }

    /// Lanes walked in step (a dense batch) and by index take the same bits, for every
    /// kind, through rings filling and wrapping.
    #[test]
    fn dense_batches_equal_lanes_by_index() {
        const LANES: usize = 5;
        let bars = series(260);
        for template in default_registry().features().iter().map(|f| f.kernel()) {
            let (w, s) = (words(&template), template.slots());
            let column = |len: usize| {
                let mut words = vec![0.0; LANES * w];
                words
                    .chunks_exact_mut(w)
                    .for_each(|lane| template.pack(lane));
                (words, vec![0.0; len])
            };
            let (mut dense, mut dense_slots) = column(LANES * s);
            let (mut indexed, mut indexed_slots) = column(LANES * s);
            for t in 0..bars.len() {
                // Lane l sees the series shifted by l bars, so the lanes differ.
                let batch: Vec<(usize, BarInput)> = (0..LANES)
                    .map(|l| (l, bars[(t + 7 * l) % bars.len()]))
                    .collect();
                update_lanes(&template, &mut dense, &mut dense_slots, &batch, true);
                update_lanes(&template, &mut indexed, &mut indexed_slots, &batch, false);
                let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&dense), bits(&indexed), "{template:?} bar {t}");
                assert_eq!(
                    bits(&dense_slots),
                    bits(&indexed_slots),
                    "{template:?} bar {t}"
                );
            }
        }
    }
}
