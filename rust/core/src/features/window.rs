//! Fixed-size windows shared by the kernels: a ring buffer, a rolling sum, rolling moments
//! and a monotonic deque. Every update is O(1) amortised and allocates nothing: the storage
//! is sized once when a kernel is built.
//!
//! Rolling sums drift (each add and subtract rounds). They are recomputed from the ring once
//! per full turn, which costs O(period) every `period` updates: O(1) amortised, and the drift
//! never accumulates past one window.

use std::collections::VecDeque;

/// A ring buffer of the last `capacity` values.
#[derive(Debug, Clone)]
pub struct Ring {
    values: Vec<f64>,
    capacity: usize,
    head: usize,
}

impl Ring {
    /// An empty ring holding at most `capacity` (at least 1) values.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            values: Vec::with_capacity(capacity),
            capacity,
            head: 0,
        }
    }

    /// Append `value`; returns the value it evicted once the ring is full.
    pub fn push(&mut self, value: f64) -> Option<f64> {
        if self.values.len() < self.capacity {
            self.values.push(value);
            return None;
        }
        let slot = &mut self.values[self.head];
        let evicted = std::mem::replace(slot, value);
        self.head = (self.head + 1) % self.capacity;
        Some(evicted)
    }

    /// Whether the ring holds `capacity` values.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.values.len() == self.capacity
    }

    /// Values held (unordered: callers only need order-free aggregates).
    #[must_use]
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }

    /// The oldest value held, if any.
    #[must_use]
    pub fn oldest(&self) -> Option<f64> {
        if self.is_full() {
            self.values.get(self.head).copied()
        } else {
            self.values.first().copied()
        }
    }

    /// Number of values held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the ring is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The window size.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forget every value (keeps the storage).
    pub fn clear(&mut self) {
        self.values.clear();
        self.head = 0;
    }
}

/// The sum of the last `period` values.
#[derive(Debug, Clone)]
pub struct RollingSum {
    ring: Ring,
    sum: f64,
    since_refresh: usize,
}

impl RollingSum {
    /// An empty window of `period` values.
    #[must_use]
    pub fn new(period: usize) -> Self {
        Self {
            ring: Ring::new(period),
            sum: 0.0,
            since_refresh: 0,
        }
    }

    /// Add `value`, dropping the oldest once full.
    pub fn push(&mut self, value: f64) {
        match self.ring.push(value) {
            None => self.sum += value,
            Some(old) => {
                self.since_refresh += 1;
                if self.since_refresh >= self.ring.capacity() {
                    self.since_refresh = 0;
                    self.sum = self.ring.as_slice().iter().sum();
                } else {
                    self.sum += value - old;
                }
            }
        }
    }

    /// The current sum.
    #[must_use]
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Whether the window holds `period` values.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// The oldest value in the window.
    #[must_use]
    pub fn oldest(&self) -> Option<f64> {
        self.ring.oldest()
    }

    /// Number of values held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no value is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Forget every value.
    pub fn clear(&mut self) {
        self.ring.clear();
        self.sum = 0.0;
        self.since_refresh = 0;
    }
}

/// Mean and variance of the last `period` values, numerically stable.
///
/// Sums are kept of `x - k` and `(x - k)^2` for a shift `k` near the data (the "shifted
/// data" method): with `k` close to the mean the squares are small and the subtraction
/// `s2 - s1^2 / n` loses little. At every refresh (once per full turn of the window) the sums
/// are rebuilt from the ring and `k` is moved to the current mean. A window whose values are
/// all equal is detected exactly (by the length of the trailing run of equal values), so its
/// variance is exactly zero rather than a rounding residue.
#[derive(Debug, Clone)]
pub struct RollingMoments {
    ring: Ring,
    shift: f64,
    s1: f64,
    s2: f64,
    since_refresh: usize,
    last: f64,
    equal_run: usize,
}

impl RollingMoments {
    /// An empty window of `period` values.
    #[must_use]
    pub fn new(period: usize) -> Self {
        Self {
            ring: Ring::new(period),
            shift: 0.0,
            s1: 0.0,
            s2: 0.0,
            since_refresh: 0,
            last: 0.0,
            equal_run: 0,
        }
    }

    /// Add `value`, dropping the oldest once full.
    pub fn push(&mut self, value: f64) {
        if self.ring.is_empty() {
            self.shift = value;
        }
        if self.equal_run > 0 && value == self.last {
            self.equal_run += 1;
        } else {
            self.equal_run = 1;
        }
        self.last = value;
        let d = value - self.shift;
        match self.ring.push(value) {
            None => {
                self.s1 += d;
                self.s2 += d * d;
            }
            Some(old) => {
                self.since_refresh += 1;
                if self.since_refresh >= self.ring.capacity() {
                    self.refresh();
                } else {
                    let o = old - self.shift;
                    self.s1 += d - o;
                    self.s2 += d * d - o * o;
                }
            }
        }
    }

    fn refresh(&mut self) {
        self.since_refresh = 0;
        let values = self.ring.as_slice();
        let n = values.len() as f64;
        self.shift = values.iter().sum::<f64>() / n;
        let (mut s1, mut s2) = (0.0, 0.0);
        for &v in values {
            let d = v - self.shift;
            s1 += d;
            s2 += d * d;
        }
        self.s1 = s1;
        self.s2 = s2;
    }

    /// Whether the window holds `period` values.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// Number of values held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no value is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// The mean of the values held (0 when empty).
    #[must_use]
    pub fn mean(&self) -> f64 {
        let n = self.ring.len();
        if n == 0 {
            return 0.0;
        }
        self.shift + self.s1 / n as f64
    }

    /// Whether every value held is the same (exact).
    #[must_use]
    pub fn is_constant(&self) -> bool {
        self.equal_run >= self.ring.len()
    }

    /// The variance with `ddof` delta degrees of freedom (0: population, 1: sample); exactly
    /// zero for a constant window, never negative; `None` when `len <= ddof`.
    #[must_use]
    pub fn variance(&self, ddof: usize) -> Option<f64> {
        let n = self.ring.len();
        if n <= ddof {
            return None;
        }
        if self.is_constant() {
            return Some(0.0);
        }
        let nf = n as f64;
        let m2 = self.s2 - self.s1 * self.s1 / nf;
        Some((m2 / (n - ddof) as f64).max(0.0))
    }

    /// Forget every value.
    pub fn clear(&mut self) {
        self.ring.clear();
        self.shift = 0.0;
        self.s1 = 0.0;
        self.s2 = 0.0;
        self.since_refresh = 0;
        self.equal_run = 0;
    }
}

/// The maximum (or minimum) of the last `period` values: a monotonic deque of
/// `(index, value)`, each value pushed and popped at most once (O(1) amortised).
#[derive(Debug, Clone)]
pub struct MonotonicDeque {
    deque: VecDeque<(u64, f64)>,
    period: u64,
    next: u64,
    keep_max: bool,
}

impl MonotonicDeque {
    /// A rolling maximum (`keep_max`) or minimum over `period` values.
    #[must_use]
    pub fn new(period: usize, keep_max: bool) -> Self {
        let period = period.max(1);
        Self {
            deque: VecDeque::with_capacity(period + 1),
            period: period as u64,
            next: 0,
            keep_max,
        }
    }

    /// Add `value`, expiring the one that left the window.
    pub fn push(&mut self, value: f64) {
        let dominated = |held: f64| {
            if self.keep_max {
                held <= value
            } else {
                held >= value
            }
        };
        while self.deque.back().is_some_and(|&(_, held)| dominated(held)) {
            self.deque.pop_back();
        }
        self.deque.push_back((self.next, value));
        self.next += 1;
        while self
            .deque
            .front()
            .is_some_and(|&(index, _)| index + self.period < self.next)
        {
            self.deque.pop_front();
        }
    }

    /// The extreme of the window (None before the first value).
    #[must_use]
    pub fn extreme(&self) -> Option<f64> {
        self.deque.front().map(|&(_, v)| v)
    }

    /// Forget every value.
    pub fn clear(&mut self) {
        self.deque.clear();
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_evicts_oldest() {
        let mut ring = Ring::new(3);
        assert_eq!(ring.push(1.0), None);
        assert_eq!(ring.push(2.0), None);
        assert_eq!(ring.oldest(), Some(1.0));
        assert_eq!(ring.push(3.0), None);
        assert_eq!(ring.push(4.0), Some(1.0));
        assert_eq!(ring.oldest(), Some(2.0));
        assert_eq!(ring.push(5.0), Some(2.0));
        assert!(ring.is_full());
        ring.clear();
        assert!(ring.is_empty());
    }

    #[test]
    fn rolling_sum_refreshes_without_drift() {
        let mut sum = RollingSum::new(4);
        for i in 0..1000 {
            sum.push(f64::from(i) * 0.1);
        }
        let expected: f64 = (996..1000).map(|i| f64::from(i) * 0.1).sum();
        assert!((sum.sum() - expected).abs() < 1e-9);
    }

    #[test]
    fn moments_match_two_pass() {
        let data: Vec<f64> = (0..500)
            .map(|i| 37000.0 + f64::from((i * 7919) % 101) * 0.01)
            .collect();
        let mut m = RollingMoments::new(20);
        for (i, &x) in data.iter().enumerate() {
            m.push(x);
            let window = &data[i.saturating_sub(19)..=i];
            let n = window.len() as f64;
            let mean = window.iter().sum::<f64>() / n;
            let var = window.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            assert!((m.mean() - mean).abs() < 1e-9);
            assert!((m.variance(0).unwrap_or(-1.0) - var).abs() < 1e-9);
        }
    }

    #[test]
    fn constant_windows_have_exactly_zero_variance() {
        let mut m = RollingMoments::new(3);
        for x in [1.0, 5.0, 0.1, 0.1, 0.1] {
            m.push(x);
        }
        assert!(m.is_constant());
        assert_eq!(m.variance(0), Some(0.0));
        m.push(0.2);
        assert!(!m.is_constant());
        assert!(m.variance(1).is_some_and(|v| v > 0.0));
        let mut one = RollingMoments::new(3);
        one.push(2.0);
        assert_eq!(one.variance(1), None);
    }

    #[test]
    fn monotonic_max_and_min() {
        let data = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0];
        let mut hi = MonotonicDeque::new(3, true);
        let mut lo = MonotonicDeque::new(3, false);
        for (i, &x) in data.iter().enumerate() {
            hi.push(x);
            lo.push(x);
            let window = &data[i.saturating_sub(2)..=i];
            let max = window.iter().copied().fold(f64::MIN, f64::max);
            let min = window.iter().copied().fold(f64::MAX, f64::min);
            assert_eq!(hi.extreme(), Some(max));
            assert_eq!(lo.extreme(), Some(min));
        }
    }
}
