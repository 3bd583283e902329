//! A minute closed in parts on several threads equals the one-thread close, and the
//! one-thread close (all series and folds, then the states resolution by resolution) equals
//! closing the bars one at a time.

use super::*;
use crate::features::registry::default_registry;
use crate::features::value::FeatureValue;

fn bar(minute: u64, k: u32) -> Bar {
    let price = 10_000 + ((minute * 7_919 + u64::from(k) * 13) % 97) as i64 - 48;
    Bar {
        ts_event: 19_000 * 1_440 * MINUTE + minute * MINUTE,
        open: price,
        high: price + 25,
        low: price - 25,
        close: price + ((minute % 5) as i64 - 2),
        volume: ((minute * 31) % 11) as i64 * 1_000,
    }
}

const MINUTE: u64 = crate::bars::MINUTE_NS;

/// The process's pool (a machine that can start no thread fails the test).
fn test_pool() -> Arc<rayon::ThreadPool> {
    pool().unwrap_or_else(|| unreachable!("no thread could be started"))
}

/// Any number of threads gives what one thread gives: rows and the updated list.
#[test]
fn every_split_equals_one_thread() {
    let one = universe(37);
    for threads in [2, 3, 4, 7] {
        let (mut split, mut single) = (one.clone(), one.clone());
        for minute in 1..200 {
            // Some instruments sit a minute out: some blocks have no bars some minutes. On
            // odd minutes an instrument out five minutes ago sends that bar late instead (a
            // first pass rewarms what it repairs).
            let bars: Vec<(u32, Bar)> = (0..37)
                .filter(|k| (k + minute) % 5 != 0 || minute % 2 == 1 && minute > 5)
                .map(|k| {
                    let late = (k + minute) % 5 == 0;
                    (
                        k as u32,
                        bar(if late { minute - 5 } else { minute }, k as u32),
                    )
                })
                .collect();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(split
                .close_split(&test_pool(), &bars, threads, &mut a)
                .is_ok());
            assert!(single.close_here(&bars, &mut b).is_ok());
            assert_eq!(a, b, "{threads} threads, minute {minute}");
        }
        for k in 0..37 {
            for resolution in Resolution::ALL {
                let (x, y) = (split.state(k, resolution), single.state(k, resolution));
                assert_eq!(x.map(|s| s.row()).ok(), y.map(|s| s.row()).ok());
            }
        }
    }
}

/// A block's error comes back from the split close, as the one-thread close reports it.
#[test]
fn a_failing_block_fails_the_split_minute_with_its_error() {
    let one = universe(37);
    let (mut split, mut single) = (one.clone(), one.clone());
    for minute in 1..20 {
        // Instrument 20 trades a third of the largest volume a minute: its 5m sum overflows.
        let bars: Vec<(u32, Bar)> = (0..37)
            .map(|k| {
                let mut b = bar(minute, k);
                if k == 20 {
                    b.volume = i64::MAX / 3;
                }
                (k, b)
            })
            .collect();
        let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
        let a = split.close_split(&test_pool(), &bars, 3, &mut rows_a);
        let b = single.close_here(&bars, &mut rows_b);
        assert_eq!(a, b, "minute {minute}");
        if a.is_err() {
            // The other blocks completed; the failing block took what its bars before the
            // refused one owed, as one thread does up to the error.
            assert!(rows_a.len() > rows_b.len(), "minute {minute}");
            for k in 0..21 {
                for resolution in Resolution::ALL {
                    let (x, y) = (split.state(k, resolution), single.state(k, resolution));
                    assert_eq!(x.map(|s| s.row()).ok(), y.map(|s| s.row()).ok(), "{k}");
                }
            }
            return;
        }
    }
    unreachable!("the 5m volume never overflowed");
}

/// Blocks of this many instruments: a few dozen instruments make several blocks.
const SMALL_BLOCK: usize = 4;

fn universe(instruments: u32) -> Universe {
    let mut u = Universe::with_block_len(default_registry().features().to_vec(), SMALL_BLOCK);
    for _ in 0..instruments {
        let config = SeriesConfig::new(Channel::External, 2, 3).unwrap_or_else(|_| unreachable!());
        let _ = u.add(config);
    }
    u
}

/// A minute large enough to split, through `close_minute` on the default blocks: the rows
/// and updated list of one thread.
#[test]
fn a_large_minute_splits_and_equals_one_thread() {
    const N: u32 = 600;
    let mut split = Universe::new(default_registry().features().to_vec());
    for _ in 0..N {
        let config = SeriesConfig::new(Channel::External, 2, 3).unwrap_or_else(|_| unreachable!());
        let _ = split.add(config);
    }
    assert!(split.blocks.len() > 2, "{} blocks", split.blocks.len());
    let mut single = split.clone();
    for minute in 1..40 {
        let bars: Vec<(u32, Bar)> = (0..N)
            .filter(|k| (k + minute) % 7 != 0)
            .map(|k| (k, bar(u64::from(minute), k)))
            .collect();
        assert!(split.threads_for(&bars) > 1 || *THREADS == 1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(split.close_minute(&bars, &mut a).is_ok());
        assert!(single.close_here(&bars, &mut b).is_ok());
        assert_eq!(a, b, "minute {minute}");
    }
    assert_same_rows(&split, &single, N, "after 39 minutes");
}

/// Each bar closed alone: the instrument-by-instrument order the two passes replace.
fn bar_by_bar(u: &mut Universe, bars: &[(u32, Bar)], updated: &mut Vec<Updated>) {
    for one in bars {
        assert!(u.close_here(std::slice::from_ref(one), updated).is_ok());
    }
}

/// The minute through `close_minute` on `two` and bar by bar on `one`: the same updated list.
fn close_both(two: &mut Universe, one: &mut Universe, bars: &[(u32, Bar)], minute: u64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    assert!(two.close_minute(bars, &mut a).is_ok());
    bar_by_bar(one, bars, &mut b);
    assert_eq!(a, b, "minute {minute}");
}

fn assert_same_rows(a: &Universe, b: &Universe, instruments: u32, context: &str) {
    for k in 0..instruments {
        for resolution in Resolution::ALL {
            let (x, y) = (a.state(k, resolution), b.state(k, resolution));
            let same = x.map(|s| s.row()).ok() == y.map(|s| s.row()).ok();
            assert!(same, "{context}: instrument {k} at {resolution:?}");
        }
    }
}

/// Minutes with skipped bars (gaps, withheld buckets), late bars (rewarms) and every
/// resolution closing: the two passes give the rows and updated list of bar-by-bar closing.
#[test]
fn two_passes_equal_bar_by_bar() {
    let (mut two, mut one) = (universe(23), universe(23));
    for minute in 1..1_500u64 {
        let bars: Vec<(u32, Bar)> = (0..23u32)
            .filter(|&k| (u64::from(k) * 31 + minute) % 97 != 0)
            .map(|k| {
                // Now and then an instrument sends the minute before last, late.
                let late = (u64::from(k) + minute) % 89 == 0 && minute > 2;
                (k, bar(if late { minute - 2 } else { minute }, k))
            })
            .collect();
        close_both(&mut two, &mut one, &bars, minute);
    }
    assert_same_rows(&two, &one, 23, "after 1,499 minutes");
}

/// A minute that names an instrument twice (out of order) closes its bars in the order given.
#[test]
fn repeated_instruments_close_in_the_order_given() {
    let (mut two, mut one) = (universe(5), universe(5));
    for minute in 1..400u64 {
        let bars: Vec<(u32, Bar)> = [3u32, 1, 3, 0, 4, 1]
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, bar(minute * 2 + u64::from(i >= 2 && k != 0), k)))
            .collect();
        close_both(&mut two, &mut one, &bars, minute);
    }
    assert_same_rows(&two, &one, 5, "after 399 minutes");
}

#[test]
fn distinct_runs_cut_before_each_repeat() {
    let bars: Vec<(u32, Bar)> = [2u32, 0, 2, 1, 0, 0]
        .iter()
        .map(|&k| (k, bar(1, k)))
        .collect();
    let runs: Vec<Vec<u32>> = distinct_runs(&bars, 3)
        .map(|run| run.iter().map(|b| b.0).collect())
        .collect();
    assert_eq!(runs, [vec![2, 0], vec![2, 1, 0], vec![0]]);
}

/// Whether instrument `k` trades in `minute`: quiet runs of ten minutes in forty, so that
/// whole 5m buckets are quiet.
fn trades(k: u32, minute: u64) -> bool {
    (minute + 13 * u64::from(k)) / 10 % 4 != 0
}

/// INTERNAL instruments that trade now and then, every minute observed and the watermark
/// advanced past it: every row equals a state warmed afresh from the series.
#[test]
fn advanced_quiet_minutes_equal_a_warm_from_the_series() {
    const N: u32 = 6;
    let config = SeriesConfig::new(Channel::Internal, 2, 3).unwrap_or_else(|_| unreachable!());
    let mut live = Universe::new(default_registry().features().to_vec());
    for _ in 0..N {
        let _ = live.add(config);
    }
    let start = 19_000 * 1_440 * MINUTE;
    let minutes = 3_000u64;
    for minute in 1..=minutes {
        let bars: Vec<(u32, Bar)> = (0..N)
            .filter(|&k| trades(k, minute))
            .map(|k| (k, bar(minute, k)))
            .collect();
        assert!(live.close_minute(&bars, &mut Vec::new()).is_ok());
        let end = start + minute * MINUTE;
        for k in 0..N {
            assert!(live.observe(k, end - MINUTE, end).is_ok());
        }
        assert!(live.advance(end, &mut Vec::new()).is_ok());
    }
    for k in 0..N {
        let mut fresh = Universe::new(default_registry().features().to_vec());
        let Ok(i) = fresh.add(config) else {
            unreachable!("valid config")
        };
        let Ok(series) = live.series(k) else {
            unreachable!("instrument {k} was added")
        };
        assert!(
            series.len() > 2_000,
            "instrument {k} holds {} bars",
            series.len()
        );
        assert!(fresh.observe(i, start, start + minutes * MINUTE).is_ok());
        assert!(fresh.warm(i, &series.view()).is_ok());
        for resolution in Resolution::ALL {
            let (x, y) = (live.state(k, resolution), fresh.state(i, resolution));
            let (x, y) = (x.map(|s| s.row()).ok(), y.map(|s| s.row()).ok());
            assert_eq!(x, y, "instrument {k} at {resolution:?}");
        }
        // The hourly state is warm: the comparison is of values, not of ABSENT rows.
        let hourly = live.state(k, Resolution::H1).map(|s| s.row());
        let sma = hourly.ok().and_then(|row| row.get("sma_20.value").copied());
        assert!(matches!(sma, Some(FeatureValue::Decimal(_))), "{sma:?}");
    }
}

/// A universe keeps its states in lanes, updated kernel by kernel over a minute's
/// instruments: each lane's words and slots equal, bit for bit, a state of its own fed the
/// same 1-minute bars one at a time (its gaps marked where the universe finds them), and
/// instruments sitting minutes out leave their lanes untouched.
#[test]
fn lanes_equal_states_of_their_own() {
    const N: u32 = 9;
    let mut u = universe(N);
    let mut own: Vec<FeatureState> = (0..N)
        .map(|_| {
            FeatureState::from_registry::<&str>(default_registry(), None, 2, 3)
                .unwrap_or_else(|_| unreachable!())
        })
        .collect();
    let mut last: Vec<Option<u64>> = vec![None; N as usize];
    for minute in 1..400u64 {
        let bars: Vec<(u32, Bar)> = (0..N)
            .filter(|k| (u64::from(*k) * 3 + minute) % 17 != 0)
            .map(|k| (k, bar(minute, k)))
            .collect();
        for &(k, b) in &bars {
            let state = &mut own[k as usize];
            if last[k as usize].is_some_and(|t| b.ts_event - t > MINUTE) {
                state.mark_gap();
            }
            assert!(state.update_raw(&b).is_ok());
            last[k as usize] = Some(b.ts_event);
        }
        assert!(u.close_minute(&bars, &mut Vec::new()).is_ok());
        for k in 0..N {
            let lane = u
                .state(k, Resolution::M1)
                .unwrap_or_else(|_| unreachable!());
            let state = &own[k as usize];
            let same_bits = lane
                .arena()
                .iter()
                .map(|x| x.to_bits())
                .eq(state.arena().iter().map(|x| x.to_bits()));
            assert!(same_bits, "instrument {k}, minute {minute}");
            assert_eq!(lane.last_ts_event(), state.last_ts_event());
            assert_eq!(lane.row(), state.row(), "instrument {k}, minute {minute}");
        }
    }
}
