//! Tests of the windows: eviction, batches against pushes, drift, rolling extremes.

use super::*;

#[test]
fn ring_evicts_oldest() {
    let mut ring = Ring::new(3);
    let slots = &mut [0.0; 3];
    assert_eq!(ring.push(slots, 1.0), None);
    assert_eq!(ring.push(slots, 2.0), None);
    assert_eq!(ring.oldest(slots), Some(1.0));
    assert_eq!(ring.push(slots, 3.0), None);
    assert_eq!(ring.push(slots, 4.0), Some(1.0));
    assert_eq!(ring.oldest(slots), Some(2.0));
    assert_eq!(ring.push(slots, 5.0), Some(2.0));
    assert!(ring.is_full());
    ring.clear();
    assert!(ring.is_empty());
    assert_eq!(ring.oldest(slots), None);
}

/// Values with runs of equal ones.
pub(crate) fn lumpy(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let step = if (i / 9) % 3 == 0 { 0 } else { (i * 7919) % 13 };
            37_000.0 + step as f64 * 0.01
        })
        .collect()
}

#[test]
fn rolling_sum_slices_equal_pushes() {
    let data = lumpy(600);
    for period in [1, 2, 3, 20] {
        for chunk in [1, 2, 5, 19, 20, 21, 64, 600] {
            let (mut one, mut many) = (RollingSum::new(period), RollingSum::new(period));
            let (mut one_slots, mut many_slots) = (vec![0.0; period], vec![0.0; period]);
            for values in data.chunks(chunk) {
                values.iter().for_each(|&v| one.push(&mut one_slots, v));
                many.push_slice(&mut many_slots, values);
                assert_eq!(
                    one.sum().to_bits(),
                    many.sum().to_bits(),
                    "{period} {chunk}"
                );
                assert_eq!(one.ring.values(&one_slots), many.ring.values(&many_slots));
                assert_eq!(one.oldest(&one_slots), many.oldest(&many_slots));
            }
        }
    }
}

#[test]
fn a_wrap_takes_the_bits_of_summing_the_ring() {
    let signed_zeros = [0.0, -0.0, 0.0, -0.0, -0.0, -0.0, -0.0, 0.0];
    for data in [lumpy(300), signed_zeros.repeat(20), vec![-0.0; 50]] {
        for period in [1, 2, 3, 7, 20] {
            let mut sum = RollingSum::new(period);
            let slots = &mut vec![0.0; period];
            for &value in &data {
                let evicts = sum.is_full();
                sum.push(slots, value);
                if evicts && sum.ring.wrapped() {
                    let summed: f64 = sum.ring.values(slots).iter().sum();
                    assert_eq!(sum.sum().to_bits(), summed.to_bits(), "{period}");
                }
            }
        }
    }
}

#[test]
fn rolling_sum_refreshes_without_drift() {
    let mut sum = RollingSum::new(4);
    let slots = &mut [0.0; 4];
    for i in 0..1000 {
        sum.push(slots, f64::from(i) * 0.1);
    }
    let expected: f64 = (996..1000).map(|i| f64::from(i) * 0.1).sum();
    assert!((sum.sum() - expected).abs() < 1e-9);
}

#[test]
fn ring_slices_equal_pushes() {
    let data = lumpy(300);
    for capacity in [1, 2, 3, 11, 20] {
        for chunk in [1, 2, 5, 19, 20, 21, 64, 300] {
            let (mut one, mut many) = (Ring::new(capacity), Ring::new(capacity));
            let (mut one_slots, mut many_slots) = (vec![0.0; capacity], vec![0.0; capacity]);
            for values in data.chunks(chunk) {
                values.iter().for_each(|&v| {
                    one.push(&mut one_slots, v);
                });
                many.push_slice(&mut many_slots, values);
                assert_eq!(one_slots, many_slots, "{capacity} {chunk}");
                assert_eq!((one.len(), one.head), (many.len(), many.head));
            }
        }
    }
}

/// The newest values of a ring, filling and wrapping, against the pushed sequence.
#[test]
fn newest_values_come_oldest_first() {
    for capacity in [1, 2, 5, 8] {
        let mut ring = Ring::new(capacity);
        let slots = &mut vec![0.0; capacity];
        let mut pushed = Vec::new();
        for i in 0..3 * capacity + 2 {
            ring.push(slots, i as f64);
            pushed.push(i as f64);
            for n in 0..=capacity + 1 {
                let (older, newer) = ring.newest(slots, n);
                let got: Vec<f64> = older.iter().chain(newer).copied().collect();
                let held = pushed.len().min(capacity);
                let want = &pushed[pushed.len() - n.min(held)..];
                assert_eq!(got, want, "capacity {capacity} push {i} n {n}");
                let nth = ring.nth_newest(slots, n);
                let want = (n < held).then(|| pushed[pushed.len() - 1 - n]);
                assert_eq!(nth, want, "capacity {capacity} push {i} nth {n}");
            }
        }
    }
}
