//! Fixed-size windows shared by the kernels: a ring buffer and a rolling sum. Every update is
//! O(1) amortised and allocates nothing.
//!
//! A window is a small `Copy` descriptor (capacity, length, head) over slots it is handed on each
//! call: every window of a [`crate::features::FeatureState`] lives in the one `Vec<f64>` arena the
//! state owns (see `layout.rs`). A window per allocation would scatter a state over a dozen heap
//! blocks, each costing a cache miss when a coarse resolution's bar closes hours after its last
//! (and a reallocation when a copied state's window first grows); side by side they cost a few, and
//! copying a state is one copy.
//!
//! Rolling sums drift (each add and subtract rounds). They are reset once per full turn (when
//! the ring's head wraps) to the sum of the window, so the drift never accumulates past one
//! window. At a wrap the window is exactly the values pushed during the turn, so a rolling
//! sum also adds each pushed value to a second, fresh sum and takes that at the wrap: the
//! same bits as summing the ring oldest first, in O(1) per push. Summing the ring instead
//! would cost O(period) at once, and instruments warmed from the same history wrap at the
//! same bar.
//!
//! The `push_slice` methods take a batch with the same result as `push` one value at a time,
//! bit for bit, in O(period) rather than O(batch) once the ring is full. A refresh depends on
//! the ring's contents alone and replaces whatever was added to the sums since the last one,
//! so of a batch's values up to its last wrap only the final `period` matter (they are the
//! ring at that wrap, where one refresh stands for all of them); the values after it update
//! the sums as `push` would.

use crate::features::primitives::packed::{pair, unpair, Packed};

/// `n` as a window size (periods are bounded far below `u32::MAX` by the registry).
fn size(n: usize) -> u32 {
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
}

/// A ring buffer of the last `capacity` values, over `capacity` slots.
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    capacity: u32,
    len: u32,
    head: u32,
}

impl Ring {
    /// An empty ring holding at most `capacity` (at least 1) values.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: size(capacity),
            len: 0,
            head: 0,
        }
    }

    /// Slots the ring needs.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.capacity as usize
    }

    /// Append `value`; returns the value it evicted once the ring is full.
    #[inline(always)]
    pub fn push(&mut self, slots: &mut [f64], value: f64) -> Option<f64> {
        if self.len < self.capacity {
            slots[self.len as usize] = value;
            self.len += 1;
            return None;
        }
        let slot = &mut slots[self.head as usize];
        let evicted = std::mem::replace(slot, value);
        // A compare, not `%`: an integer division would cost more than the rest of the push.
        self.head += 1;
        if self.head == self.capacity {
            self.head = 0;
        }
        Some(evicted)
    }

    /// Advance as a push would, and return the slot that push writes (for entries wider
    /// than a slot: see [`crate::features::primitives::bar_ring`]).
    #[inline(always)]
    pub(crate) fn claim(&mut self) -> usize {
        if self.len < self.capacity {
            self.len += 1;
            return self.len as usize - 1;
        }
        let at = self.head;
        self.head += 1;
        if self.head == self.capacity {
            self.head = 0;
        }
        at as usize
    }

    /// Advance as `n` pushes would, leaving the slots they would write as they were (for
    /// pushes whose values later pushes overwrite anyway).
    pub(crate) fn skip(&mut self, n: usize) {
        let filling = n.min((self.capacity - self.len) as usize);
        self.len += filling as u32;
        if self.is_full() {
            let turned = (n - filling) % self.capacity as usize;
            self.head = ((self.head as usize + turned) % self.capacity as usize) as u32;
        }
    }

    /// Whether the last eviction completed a full turn (the head is back at slot 0); the
    /// slots then hold the window oldest first.
    pub(super) fn wrapped(&self) -> bool {
        self.head == 0
    }

    /// For a full ring: push the values of `values` up to the last wrap they reach, leaving
    /// the slots as one `push` each would, and return the values after that wrap; `None`
    /// (nothing pushed) when they reach no wrap.
    pub(super) fn push_to_last_wrap<'v>(
        &mut self,
        slots: &mut [f64],
        values: &'v [f64],
    ) -> Option<&'v [f64]> {
        let (capacity, head) = (self.slots(), self.head as usize);
        let to_wrap = capacity - head;
        let extra_turns = values.len().checked_sub(to_wrap)? / capacity;
        let (pushed, rest) = values.split_at(to_wrap + extra_turns * capacity);
        let slots = &mut slots[..capacity];
        if extra_turns == 0 {
            slots[head..].copy_from_slice(pushed);
        } else {
            // The last turn overwrote every slot, oldest in slot 0.
            slots.copy_from_slice(&pushed[pushed.len() - capacity..]);
        }
        self.head = 0;
        Some(rest)
    }

    /// For a full ring: the slots the next `len` pushes overwrite, oldest first, when they
    /// reach no wrap (`len < capacity - head`). Advances the head past them.
    pub(super) fn run<'s>(&mut self, slots: &'s mut [f64], len: usize) -> &'s mut [f64] {
        let head = self.head as usize;
        self.head += len as u32;
        &mut slots[head..head + len]
    }

    /// Whether the ring holds `capacity` values.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// Values held (unordered: callers only need order-free aggregates).
    #[must_use]
    pub fn values<'s>(&self, slots: &'s [f64]) -> &'s [f64] {
        &slots[..self.len as usize]
    }

    /// Push each of `values` in turn, leaving the slots as one `push` each would, in
    /// O(capacity) once the ring is full.
    pub fn push_slice(&mut self, slots: &mut [f64], values: &[f64]) {
        let mut values = values;
        while !self.is_full() {
            let Some((&value, rest)) = values.split_first() else {
                return;
            };
            self.push(slots, value);
            values = rest;
        }
        if let Some(rest) = self.push_to_last_wrap(slots, values) {
            values = rest;
        }
        self.run(slots, values.len()).copy_from_slice(values);
    }

    /// The newest `n` values held (all of them when fewer), oldest first, as two runs of
    /// slots (the second empty unless they wrap).
    #[must_use]
    pub fn newest<'s>(&self, slots: &'s [f64], n: usize) -> (&'s [f64], &'s [f64]) {
        let (len, head) = (self.len(), self.head as usize);
        let n = n.min(len);
        if !self.is_full() {
            return (&slots[len - n..len], &[]);
        }
        if n <= head {
            (&slots[head - n..head], &[])
        } else {
            (&slots[len - (n - head)..len], &slots[..head])
        }
    }

    /// Where the newest `n` entries held (all of them when fewer) sit, oldest first.
    pub fn newest_at(&self, n: usize) -> impl Iterator<Item = usize> + Clone {
        let (len, head) = (self.len(), self.head as usize);
        let n = n.min(len);
        let first = if self.is_full() {
            head + len - n
        } else {
            len - n
        };
        (first..first + n).map(move |i| if i >= len { i - len } else { i })
    }

    /// The value pushed `k` pushes before the newest (`k = 0`: the newest), if held.
    #[must_use]
    pub fn nth_newest(&self, slots: &[f64], k: usize) -> Option<f64> {
        let (len, head) = (self.len(), self.head as usize);
        if k >= len {
            return None;
        }
        let at = if self.is_full() {
            (head + len - 1 - k) % len
        } else {
            len - 1 - k
        };
        slots.get(at).copied()
    }

    /// The oldest value held, if any.
    #[must_use]
    pub fn oldest(&self, slots: &[f64]) -> Option<f64> {
        if self.len == 0 {
            None
        } else if self.is_full() {
            slots.get(self.head as usize).copied()
        } else {
            slots.first().copied()
        }
    }

    /// Number of values held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the ring is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget every value.
    pub fn clear(&mut self) {
        self.len = 0;
        self.head = 0;
    }
}

impl Packed for Ring {
    const WORDS: usize = 1;

    fn pack(&self, words: &mut [f64]) {
        words[0] = pair(self.len, self.head);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let (len, head) = unpair(words[0]);
        Self {
            capacity: template.capacity,
            len,
            head,
        }
    }
}

/// Where a fresh sum starts: `Sum` for `f64` folds from -0.0, and the fresh sum must have
/// the bits of the ring's sum.
pub(super) const FRESH: f64 = -0.0;

/// The sum of the last `period` values.
#[derive(Debug, Clone, Copy)]
pub struct RollingSum {
    ring: Ring,
    sum: f64,
    /// The values pushed since the last wrap (once full), in push order: the window's sum at
    /// the next wrap.
    fresh: f64,
}

impl RollingSum {
    /// An empty window of `period` values.
    #[must_use]
    pub fn new(period: usize) -> Self {
        Self {
            ring: Ring::new(period),
            sum: 0.0,
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
        match self.ring.push(slots, value) {
            None => self.sum += value,
            Some(_) if self.ring.wrapped() => {
                self.sum = self.fresh + value;
                self.fresh = FRESH;
            }
            Some(old) => {
                self.sum += value - old;
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
        if let Some(rest) = self.ring.push_to_last_wrap(slots, values) {
            self.refresh(slots);
            values = rest;
        }
        let (mut sum, mut fresh) = (self.sum, self.fresh);
        for (slot, &value) in self.ring.run(slots, values.len()).iter_mut().zip(values) {
            sum += value - *slot;
            fresh += value;
            *slot = value;
        }
        (self.sum, self.fresh) = (sum, fresh);
    }

    /// At a wrap: the sum of the ring, oldest first (what the fresh sum holds after a turn
    /// of pushes).
    fn refresh(&mut self, slots: &[f64]) {
        self.sum = self.ring.values(slots).iter().sum();
        self.fresh = FRESH;
    }

    /// The ring of the window's values.
    #[must_use]
    pub(crate) fn ring(&self) -> Ring {
        self.ring
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
    pub fn oldest(&self, slots: &[f64]) -> Option<f64> {
        self.ring.oldest(slots)
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
        self.fresh = FRESH;
    }
}

impl Packed for RollingSum {
    const WORDS: usize = 3;

    fn pack(&self, words: &mut [f64]) {
        self.ring.pack(words);
        words[1] = self.sum;
        words[2] = self.fresh;
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            ring: Packed::unpack(&template.ring, words),
            sum: words[1],
            fresh: words[2],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
