//! Fixed-size windows shared by the kernels: a ring buffer, a rolling sum, rolling moments
//! ([`super::moments`]) and a monotonic deque. Every update is O(1) amortised and allocates
//! nothing: the storage is sized once when a kernel is built.
//!
//! Rolling sums drift (each add and subtract rounds). They are recomputed from the ring once
//! per full turn (when the ring's head wraps), which costs O(period) every `period` updates:
//! O(1) amortised, and the drift never accumulates past one window.
//!
//! The `push_slice` methods take a batch with the same result as `push` one value at a time,
//! bit for bit, in O(period) rather than O(batch) once the ring is full. A refresh depends on
//! the ring's contents alone and replaces whatever was added to the sums since the last one,
//! so of a batch's values up to its last wrap only the final `period` matter (they are the
//! ring at that wrap, where one refresh stands for all of them); the values after it update
//! the sums as `push` would.

use std::collections::VecDeque;

pub use super::moments::RollingMoments;

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
        // A compare, not `%`: an integer division would cost more than the rest of the push.
        self.head += 1;
        if self.head == self.capacity {
            self.head = 0;
        }
        Some(evicted)
    }

    /// Whether the last eviction completed a full turn (the head is back at slot 0); the
    /// slots then hold the window oldest first.
    pub(super) fn wrapped(&self) -> bool {
        self.head == 0
    }

    /// For a full ring: push the values of `values` up to the last wrap they reach, leaving
    /// the slots as one `push` each would, and return the values after that wrap; `None`
    /// (nothing pushed) when they reach no wrap.
    pub(super) fn push_to_last_wrap<'v>(&mut self, values: &'v [f64]) -> Option<&'v [f64]> {
        let to_wrap = self.capacity - self.head;
        let extra_turns = values.len().checked_sub(to_wrap)? / self.capacity;
        let (pushed, rest) = values.split_at(to_wrap + extra_turns * self.capacity);
        if extra_turns == 0 {
            self.values[self.head..].copy_from_slice(pushed);
        } else {
            // The last turn overwrote every slot, oldest in slot 0.
            self.values
                .copy_from_slice(&pushed[pushed.len() - self.capacity..]);
        }
        self.head = 0;
        Some(rest)
    }

    /// For a full ring: the slots the next `len` pushes overwrite, oldest first, when they
    /// reach no wrap (`len < capacity - head`). Advances the head past them.
    pub(super) fn run(&mut self, len: usize) -> &mut [f64] {
        let head = self.head;
        self.head += len;
        &mut self.values[head..head + len]
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
}

impl RollingSum {
    /// An empty window of `period` values.
    #[must_use]
    pub fn new(period: usize) -> Self {
        Self {
            ring: Ring::new(period),
            sum: 0.0,
        }
    }

    /// Add `value`, dropping the oldest once full.
    pub fn push(&mut self, value: f64) {
        match self.ring.push(value) {
            None => self.sum += value,
            Some(_) if self.ring.wrapped() => self.refresh(),
            Some(old) => self.sum += value - old,
        }
    }

    /// Add each of `values` in turn, as [`Self::push`] does.
    pub fn push_slice(&mut self, values: &[f64]) {
        let mut values = values;
        while !self.ring.is_full() {
            let Some((&value, rest)) = values.split_first() else {
                return;
            };
            self.push(value);
            values = rest;
        }
        if let Some(rest) = self.ring.push_to_last_wrap(values) {
            self.refresh();
            values = rest;
        }
        let mut sum = self.sum;
        for (slot, &value) in self.ring.run(values.len()).iter_mut().zip(values) {
            sum += value - *slot;
            *slot = value;
        }
        self.sum = sum;
    }

    fn refresh(&mut self) {
        self.sum = self.ring.as_slice().iter().sum();
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
pub(crate) mod tests {
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

    /// Values with runs of equal ones (the moments track those runs across batches).
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
                for values in data.chunks(chunk) {
                    values.iter().for_each(|&v| one.push(v));
                    many.push_slice(values);
                    assert_eq!(
                        one.sum().to_bits(),
                        many.sum().to_bits(),
                        "{period} {chunk}"
                    );
                    assert_eq!(one.ring.as_slice(), many.ring.as_slice());
                    assert_eq!(one.oldest(), many.oldest());
                }
            }
        }
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
