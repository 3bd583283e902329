//! Reading a [`FeatureState`]: each kernel's raw outputs typed at their declared value type
//! and scale, or ABSENT with the reason.

use super::{FeatureState, Row};
use crate::decimal::Fixed;
use crate::features::primitives::kernel::Kernel;
use crate::features::registry::{AnyKernel, Compiled};
use crate::features::spec::{OutputSpec, ValueType};
use crate::features::value::{fixed_from_f64, AbsentReason, FeatureValue, Raw};

/// Type a raw output at its declared value type and scale; anything undefined or out of
/// range is ABSENT `INPUT_UNAVAILABLE`.
pub(super) fn typed(raw: Raw, output: &OutputSpec) -> FeatureValue {
    let unavailable = FeatureValue::Absent(AbsentReason::InputUnavailable);
    match (raw, output.value_type) {
        (Raw::Real(x), ValueType::Decimal) => {
            fixed_from_f64(x, output.scale).map_or(unavailable, FeatureValue::Decimal)
        }
        (Raw::Int(i), ValueType::Decimal) => Fixed {
            raw: i128::from(i),
            scale: 0,
        }
        .rescale_half_even(u32::from(output.scale))
        .map_or(unavailable, FeatureValue::Decimal),
        (Raw::Int(i), ValueType::Integer) => FeatureValue::Integer(i),
        (Raw::Int(i), ValueType::UnixNanos) => {
            u64::try_from(i).map_or(unavailable, FeatureValue::UnixNanos)
        }
        _ => unavailable,
    }
}

/// Visit every value of `kernels` (as [`crate::features::engine::layout::Layout::kernels`]
/// gives them) in selection order, then output order, without allocating; `after_gap` says
/// why a kernel that is not warm is ABSENT.
pub(crate) fn visit_values<'a>(
    kernels: impl Iterator<Item = (&'a Compiled, AnyKernel, &'a [f64])>,
    after_gap: bool,
    mut visit: impl FnMut(&'a str, FeatureValue),
) {
    for (compiled, kernel, slots) in kernels {
        let seen = kernel.bars_seen();
        let needed = kernel.warmup_bars();
        let outputs = &compiled.spec.outputs;
        if seen < needed {
            let reason = if after_gap {
                AbsentReason::GapInInput
            } else {
                AbsentReason::WarmingUp {
                    bars_seen: seen,
                    bars_needed: needed,
                }
            };
            for key in &compiled.keys {
                visit(key, FeatureValue::Absent(reason));
            }
            continue;
        }
        let raw = kernel.values(slots);
        for ((key, output), value) in compiled.keys.iter().zip(outputs).zip(raw) {
            visit(key, typed(value, output));
        }
    }
}

impl FeatureState {
    /// Visit every value in selection order, then output order, without allocating.
    pub fn for_each_value(&self, visit: impl FnMut(&str, FeatureValue)) {
        visit_values(self.layout.kernels(&self.arena), self.meta.after_gap, visit);
    }

    /// The current row.
    #[must_use]
    pub fn row(&self) -> Row {
        let mut row = Row::new();
        self.for_each_value(|key, value| {
            row.insert(key.to_owned(), value);
        });
        row
    }
}
