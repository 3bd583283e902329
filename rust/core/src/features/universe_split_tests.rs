//! A minute closed in parts on several threads equals the one-thread close.

use super::*;
use crate::features::default_registry;

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

/// Any number of parts gives what one thread gives: rows and the updated list.
#[test]
fn every_split_equals_one_thread() {
    let mut one = Universe::new(default_registry().features().to_vec());
    for _ in 0..37 {
        let config = SeriesConfig::new(Channel::External, 2, 3).unwrap_or_else(|_| unreachable!());
        let _ = one.add(config);
    }
    for parts in [2, 3, 4, 7] {
        let (mut split, mut single) = (one.clone(), one.clone());
        for minute in 1..200 {
            // Some instruments sit a minute out: parts own instruments without bars.
            let bars: Vec<(u32, Bar)> = (0..37)
                .filter(|k| (k + minute) % 5 != 0)
                .map(|k| (k as u32, bar(minute, k as u32)))
                .collect();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(split.close_split(&bars, parts, &mut a).is_ok());
            let mut closed = Vec::new();
            assert!(close_run(&mut single.instruments, 0, &bars, &mut closed, &mut b).is_ok());
            assert_eq!(a, b, "{parts} parts, minute {minute}");
        }
        for k in 0..37 {
            for resolution in Resolution::ALL {
                let (x, y) = (split.state(k, resolution), single.state(k, resolution));
                assert_eq!(x.map(FeatureState::row).ok(), y.map(FeatureState::row).ok());
            }
        }
    }
}

/// A chunk's error comes back from the split close, as the one-thread close reports it.
#[test]
fn a_failing_chunk_fails_the_split_minute_with_its_error() {
    let mut one = Universe::new(default_registry().features().to_vec());
    for _ in 0..37 {
        let config = SeriesConfig::new(Channel::External, 2, 3).unwrap_or_else(|_| unreachable!());
        let _ = one.add(config);
    }
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
        let a = split.close_split(&bars, 3, &mut Vec::new());
        let b = close_run(
            &mut single.instruments,
            0,
            &bars,
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert_eq!(a, b, "minute {minute}");
        if a.is_err() {
            return;
        }
    }
    unreachable!("the 5m volume never overflowed");
}
