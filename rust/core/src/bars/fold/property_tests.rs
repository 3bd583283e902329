//! The fast path over runs of complete buckets (runs.rs) changes nothing: every fold, with it
//! and without, bar for bar.

use super::super::{BarsError, BarsView, Channel, Coverage, Resolution, MINUTE_NS};
use super::{extent, fold, fold_from, fold_many, FoldOutput};
use proptest::prelude::*;

/// Offline columns and the coverage stated with them.
struct Case {
    columns: [Vec<i64>; 5],
    ts: Vec<u64>,
    sequence: Option<Vec<u64>>,
    coverage: Coverage,
}

impl Case {
    fn view(&self) -> BarsView<'_> {
        let columns = self.columns.each_ref().map(Vec::as_slice);
        BarsView::new(&self.ts, columns, self.sequence.as_deref())
    }
}

/// Minutes over a few days with dropped ones, volumes sometimes near 2^63 (so some sums
/// overflow and some only come close), and coverage with outages that may end before
/// the bars do (open buckets) or reach past them.
/// With `confirm`, about half the dropped minutes are confirmed empty by the venue.
fn case(
    seed: u64,
    minutes: u64,
    drop: u64,
    huge: bool,
    holes: usize,
    sequenced: bool,
    confirm: bool,
) -> Case {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let first = 19_000 * 1_440 + next() % 2_880;
    let mut case = Case {
        columns: Default::default(),
        ts: Vec::new(),
        sequence: sequenced.then(Vec::new),
        coverage: Coverage::new(),
    };
    let mut price = 10_000i64;
    for minute in first..first + minutes {
        if next() % 1_000 < drop {
            if confirm && next() % 2 == 0 {
                let _ = case
                    .coverage
                    .confirm_empty(minute * MINUTE_NS, (minute + 1) * MINUTE_NS);
            }
            continue;
        }
        price += (next() % 41) as i64 - 20;
        let spread = (next() % 4) as i64;
        let volume = match next() % 8 {
            0 if huge => 1 << 62,
            1 if huge => i64::MAX / 3,
            _ => (next() % 1_000) as i64,
        };
        for (column, value) in case.columns.iter_mut().zip([
            price,
            price + spread,
            price - spread,
            price + spread / 2,
            volume,
        ]) {
            column.push(value);
        }
        case.ts.push((minute + 1) * MINUTE_NS);
        if let Some(sequence) = &mut case.sequence {
            sequence.push(next() % 1_000_000);
        }
    }
    let (lo, hi) = (first - next() % 300, first + minutes + next() % 300);
    let mut cuts: Vec<u64> = (0..2 * holes).map(|_| lo + next() % (hi - lo)).collect();
    cuts.sort_unstable();
    let edges: Vec<u64> = [lo].into_iter().chain(cuts).chain([hi]).collect();
    for pair in edges.chunks_exact(2) {
        if pair[0] < pair[1] {
            let _ = case
                .coverage
                .observe(pair[0] * MINUTE_NS, pair[1] * MINUTE_NS);
        }
    }
    case
}

/// The fold without the fast path: the per-bucket walk alone.
fn walked(case: &Case, channel: Channel, resolution: Resolution) -> Result<FoldOutput, BarsError> {
    let view = case.view();
    let span = extent(&view, MINUTE_NS, &case.coverage);
    fold_from(
        &view,
        Resolution::M1,
        span,
        &case.coverage,
        channel,
        resolution,
        view.ts_event,
        false,
    )
}

proptest! {
    #[test]
    fn runs_change_nothing(
        seed in any::<u64>(),
        minutes in 0u64..4_000,
        drop in prop::sample::select(vec![0u64, 1, 2, 50, 500]),
        huge in any::<bool>(),
        holes in 0usize..3,
        sequenced in any::<bool>(),
        external in any::<bool>(),
        confirm in any::<bool>(),
    ) {
        let case = case(seed, minutes, drop, huge, holes, sequenced, confirm);
        let channel = if external { Channel::External } else { Channel::Internal };
        let view = case.view();
        prop_assert!(view.validate().is_ok());
        let mut expected = Vec::new();
        for resolution in Resolution::ALL {
            let walked = walked(&case, channel, resolution);
            prop_assert_eq!(&fold(&view, &case.coverage, channel, resolution), &walked);
            expected.push(walked);
        }
        // fold_many: every derived resolution, out of order and one twice; the first
        // refusal in ascending order when any level refuses.
        let asked = [Resolution::H1, Resolution::M5, Resolution::D1, Resolution::M15,
            Resolution::H1, Resolution::H4, Resolution::M30];
        let want: Result<Vec<FoldOutput>, BarsError> = asked
            .iter()
            .map(|&r| expected[Resolution::ALL.iter().position(|&a| a == r).unwrap_or(0)].clone())
            .collect();
        let want = match expected[1..].iter().find_map(|e| e.clone().err()) {
            Some(error) => Err(error),
            None => want,
        };
        prop_assert_eq!(fold_many(&view, &case.coverage, channel, &asked), want);
    }
}
