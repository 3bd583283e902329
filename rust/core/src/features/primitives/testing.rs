//! Helpers for the kernel unit tests.

use crate::features::primitives::input::BarInput;

use crate::features::primitives::kernel::{Kernel, Owned};

use crate::features::value::Raw;

/// A bar with every price at `close`.
pub fn flat(ts: u64, close: f64, volume: f64) -> BarInput {
    BarInput {
        ts_event: ts,
        open: close,
        high: close,
        low: close,
        close,
        volume,
    }
}

/// `kernel`, with slots of its own, after one [`flat`] bar per close of `closes` (volume 1),
/// at times 0, 1, ...
pub fn after_closes<K: Kernel>(kernel: K, closes: &[f64]) -> Owned<K> {
    let mut owned = Owned::new(kernel);
    for (i, &close) in closes.iter().enumerate() {
        owned.update(&flat(i as u64, close, 1.0));
    }
    owned
}

/// A deterministic wavy series of bars (no randomness in unit tests).
pub fn series(n: usize) -> Vec<BarInput> {
    (0..n)
        .map(|i| {
            let t = i as f64;
            let close = 100.0 + 5.0 * (t * 0.3).sin() + 0.05 * t;
            BarInput {
                ts_event: (i as u64 + 1) * 60_000_000_000,
                open: close - 0.2 * (t * 0.7).cos(),
                high: close + 0.5 + 0.1 * (t * 1.3).sin().abs(),
                low: close - 0.5 - 0.1 * (t * 0.9).cos().abs(),
                close,
                volume: 10.0 + 3.0 * (t * 0.5).sin(),
            }
        })
        .collect()
}

/// The first output as f64 (NaN when undefined).
pub fn first<K: Kernel>(kernel: &Owned<K>) -> f64 {
    nth(kernel, 0)
}

/// Output `i` as f64 (NaN when undefined).
pub fn nth<K: Kernel>(kernel: &Owned<K>, i: usize) -> f64 {
    match kernel.values()[i] {
        Raw::Real(x) => x,
        Raw::Int(v) => v as f64,
        Raw::Undefined => f64::NAN,
    }
}

/// Incremental and batch paths agree bit for bit, however the batch is split (the split
/// points exercise every prologue/steady-state boundary of the kernels' batch loops).
pub fn batch_equals_incremental<K: Kernel + Clone>(fresh: K, bars: &[BarInput]) {
    let fresh = Owned::new(fresh);
    let mut a = fresh.clone();
    let mut b = fresh.clone();
    for bar in bars {
        a.update(bar);
    }
    b.warm(bars);
    assert_eq!(format!("{:?}", a.values()), format!("{:?}", b.values()));
    assert_eq!(a.bars_seen(), bars.len() as u64);
    let mut c = a.clone();
    c.reset();
    assert_eq!(c.bars_seen(), 0);
    c.warm(bars);
    assert_eq!(format!("{:?}", a.values()), format!("{:?}", c.values()));
    for step in [1, 2, 7, 33, 300] {
        let (mut batch, mut single) = (fresh.clone(), fresh.clone());
        for chunk in bars.chunks(step) {
            batch.warm(chunk);
            for bar in chunk {
                single.update(bar);
            }
            assert_eq!(
                format!("{:?}", batch.values()),
                format!("{:?}", single.values())
            );
            assert_eq!(batch.bars_seen(), single.bars_seen());
        }
    }
    for first in [1, 5, 40] {
        let mut mixed = fresh.clone();
        let first = first.min(bars.len());
        for bar in &bars[..first] {
            mixed.update(bar);
        }
        mixed.warm(&bars[first..]);
        assert_eq!(format!("{:?}", a.values()), format!("{:?}", mixed.values()));
    }
}
