//! Rolling mean and variance over a [`Ring`], for Bollinger bands, realised volatility and
//! the volume z-score. Like the rolling sum (see [`super::window`]) the sums are rebuilt at
//! each wrap of the ring, `push_slice` takes a batch in O(period), and the ring's slots are
//! handed in by the caller.

use super::packed::{int, word, Packed};
use super::window::{Ring, FRESH};

/// Mean and variance of the last `period` values, numerically stable.
///
/// Sums are kept of `x - k` and `(x - k)^2` for a shift `k` near the data (the "shifted
/// data" method): with `k` close to the mean the squares are small and the subtraction
/// `s2 - s1^2 / n` loses little. At every refresh (once per full turn of the window) the sums
/// are rebuilt from the ring and `k` is moved to the current mean. A window whose values are
/// all equal is detected exactly (by the length of the trailing run of equal values, counted
/// up to `u32::MAX`: far past any window), so its variance is exactly zero rather than a
/// rounding residue.
#[derive(Debug, Clone, Copy)]
pub struct RollingMoments {
    ring: Ring,
    equal_run: u32,
    shift: f64,
    s1: f64,
    s2: f64,
    last: f64,
    /// The sum of the values pushed since the ring last wrapped (or first filled), oldest
    /// first: at the next wrap it is the window's sum, the new shift's numerator.
    fresh: f64,
}

impl RollingMoments {
    /// An empty window of `period` values.
    #[must_use]
    pub fn new(period: usize) -> Self {
        Self {
            ring: Ring::new(period),
            equal_run: 0,
            shift: 0.0,
            s1: 0.0,
            s2: 0.0,
            last: 0.0,
            fresh: FRESH,
        }
    }

    /// Slots the window needs.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.ring.slots()
    }

    /// Add `value`, dropping the oldest once full.
    #[inline(always)]
    pub fn push(&mut self, slots: &mut [f64], value: f64) {
        if self.ring.is_empty() {
            self.shift = value;
        }
        if self.equal_run > 0 && value == self.last {
            self.equal_run = self.equal_run.saturating_add(1);
        } else {
            self.equal_run = 1;
        }
        self.last = value;
        let d = value - self.shift;
        match self.ring.push(slots, value) {
            None => {
                self.s1 += d;
                self.s2 += d * d;
            }
            Some(_) if self.ring.wrapped() => {
                let sum = self.fresh + value;
                self.fresh = FRESH;
                self.refresh_with(slots, sum);
            }
            Some(old) => {
                let o = old - self.shift;
                self.s1 += d - o;
                self.s2 += d * d - o * o;
                self.fresh += value;
            }
        }
    }

    /// Add each of `values` in turn, as [`Self::push`] does.
    pub fn push_slice(&mut self, slots: &mut [f64], values: &[f64]) {
        let mut values = values;
        while !self.ring.is_full() {
            let Some((&value, rest)) = values.split_first() else {
                return;
            };
            self.push(slots, value);
            values = rest;
        }
        self.track_equal_run(values);
        if let Some(rest) = self.ring.push_to_last_wrap(slots, values) {
            self.refresh(slots);
            values = rest;
        }
        let shift = self.shift;
        let (mut s1, mut s2, mut fresh) = (self.s1, self.s2, self.fresh);
        for (slot, &value) in self.ring.run(slots, values.len()).iter_mut().zip(values) {
            let (d, o) = (value - shift, *slot - shift);
            s1 += d - o;
            s2 += d * d - o * o;
            fresh += value;
            *slot = value;
        }
        (self.s1, self.s2, self.fresh) = (s1, s2, fresh);
    }

    /// The trailing run of equal values after pushing `values` (the run `push` counts), from
    /// the end: its length is the trailing run of equal neighbours in `values`, extended by
    /// the run before them when all are equal to the last value pushed. The ring holds a
    /// value, so `equal_run > 0` (the test `push` makes).
    fn track_equal_run(&mut self, values: &[f64]) {
        let Some(&newest) = values.last() else {
            return;
        };
        let trailing = 1 + values
            .windows(2)
            .rev()
            .take_while(|pair| pair[0] == pair[1])
            .count();
        let counted = u32::try_from(trailing).unwrap_or(u32::MAX);
        self.equal_run = if trailing == values.len() && values[0] == self.last {
            self.equal_run.saturating_add(counted)
        } else {
            counted
        };
        self.last = newest;
    }

    /// Rebuild the sums from the ring at a wrap (the values are the ring's, oldest first).
    fn refresh(&mut self, slots: &[f64]) {
        self.fresh = FRESH;
        let sum = self.ring.values(slots).iter().sum::<f64>();
        self.refresh_with(slots, sum);
    }

    /// [`Self::refresh`] with the window's `sum` known: the same bits as summing the ring,
    /// oldest first, from `FRESH` (what `f64`'s `sum` starts from).
    fn refresh_with(&mut self, slots: &[f64], sum: f64) {
        let values = self.ring.values(slots);
        let shift = sum / values.len() as f64;
        // Even and odd values in two sums each, added at the end: the pairs go through
        // one vector register, and a single running sum was a chain of dependent additions.
        let (mut s1, mut s2) = ([0.0; 2], [0.0; 2]);
        let pairs = values.chunks_exact(2);
        let odd = pairs.remainder();
        for pair in pairs {
            let d = [pair[0] - shift, pair[1] - shift];
            s1 = [s1[0] + d[0], s1[1] + d[1]];
            s2 = [s2[0] + d[0] * d[0], s2[1] + d[1] * d[1]];
        }
        if let Some(&v) = odd.first() {
            let d = v - shift;
            s1[0] += d;
            s2[0] += d * d;
        }
        (self.shift, self.s1, self.s2) = (shift, s1[0] + s1[1], s2[0] + s2[1]);
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
        self.equal_run as usize >= self.ring.len()
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
        self.equal_run = 0;
        self.fresh = FRESH;
    }
}

impl Packed for RollingMoments {
    const WORDS: usize = 7;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        self.ring.pack(words);
        words[1] = word(u64::from(self.equal_run));
        words[2..].copy_from_slice(&[self.shift, self.s1, self.s2, self.last, self.fresh]);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        Self {
            ring: Packed::unpack(&template.ring, words),
            equal_run: int(words[1]) as u32,
            shift: words[2],
            s1: words[3],
            s2: words[4],
            last: words[5],
            fresh: words[6],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_equal_pushes() {
        let data = super::super::window::tests::lumpy(600);
        for period in [1, 2, 3, 20] {
            for chunk in [1, 2, 5, 19, 20, 21, 64, 600] {
                let (mut one, mut many) =
                    (RollingMoments::new(period), RollingMoments::new(period));
                let (mut one_slots, mut many_slots) = (vec![0.0; period], vec![0.0; period]);
                for values in data.chunks(chunk) {
                    values.iter().for_each(|&v| one.push(&mut one_slots, v));
                    many.push_slice(&mut many_slots, values);
                    let bits = |m: &RollingMoments| {
                        (
                            m.mean().to_bits(),
                            m.variance(0).map(f64::to_bits),
                            m.is_constant(),
                            [m.shift, m.s1, m.s2, m.fresh].map(f64::to_bits),
                        )
                    };
                    assert_eq!(bits(&one), bits(&many), "{period} {chunk}");
                    assert_eq!(one.ring.values(&one_slots), many.ring.values(&many_slots));
                }
            }
        }
    }

    #[test]
    fn moments_match_two_pass() {
        let data: Vec<f64> = (0..500)
            .map(|i| 37000.0 + f64::from((i * 7919) % 101) * 0.01)
            .collect();
        let mut m = RollingMoments::new(20);
        let slots = &mut [0.0; 20];
        for (i, &x) in data.iter().enumerate() {
            m.push(slots, x);
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
        let slots = &mut [0.0; 3];
        for x in [1.0, 5.0, 0.1, 0.1, 0.1] {
            m.push(slots, x);
        }
        assert!(m.is_constant());
        assert_eq!(m.variance(0), Some(0.0));
        m.push(slots, 0.2);
        assert!(!m.is_constant());
        assert!(m.variance(1).is_some_and(|v| v > 0.0));
        let mut one = RollingMoments::new(3);
        one.push(slots, 2.0);
        assert_eq!(one.variance(1), None);
    }
}
