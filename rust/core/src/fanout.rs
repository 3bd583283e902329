//! The fan-out hub: each published event is encoded once (an `Arc<[u8]>` shared by every
//! queue holding it) and offered to each subscriber whose keep-predicate accepts it. Every
//! subscriber has one bounded queue (2,048 events by default); when it is full the oldest
//! event is dropped and counted, so a slow consumer loses its own oldest events and never
//! stalls the producer or anyone else.
//!
//! The predicate (instrument ids, kinds) is applied at enqueue: a subscriber that keeps one
//! instrument is indexed under it and never sees, let alone evicts for, unrelated traffic.
//! Publishing costs O(subscribers that keep the event), not O(all subscribers).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The per-subscriber queue bound of the spec ("Limits").
pub const DEFAULT_QUEUE: usize = 2_048;

/// Most distinct event kinds a hub tells apart (one bit each in a subscriber's kind mask).
pub const MAX_KINDS: usize = 63;

/// The bit of every kind no subscriber named: only subscribers keeping every kind (whose
/// mask is all ones) take it, so publishing a new kind claims no bit.
const UNNAMED_KIND: u64 = 1 << MAX_KINDS;

/// A subscriber handle: slot index in the low 32 bits, the slot's generation above, so a
/// handle to an ended subscription never reaches a later one in the same slot.
pub type SubscriberId = u64;

/// A refusal of the hub.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// No live subscription has this id.
    #[error("UNKNOWN_SUBSCRIBER: no live subscription has id {id}")]
    UnknownSubscriber {
        /// The id given.
        id: SubscriberId,
    },
    /// A queue bound of zero.
    #[error("INVALID_QUEUE_CAPACITY: a subscriber queue holds at least 1 event, got {capacity}")]
    BadCapacity {
        /// The bound given.
        capacity: usize,
    },
    /// More distinct kinds than a mask holds.
    #[error("TOO_MANY_KINDS: a hub tells apart at most {MAX_KINDS} event kinds; {kind:?} would be one more")]
    TooManyKinds {
        /// The kind refused.
        kind: String,
    },
}

/// What a subscriber keeps: `None` keeps everything on that axis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Instrument ids kept.
    pub instruments: Option<Vec<String>>,
    /// Event kinds kept (`bar`, `quote`, `trade`, ...).
    pub kinds: Option<Vec<String>>,
}

/// A subscriber's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Events waiting.
    pub pending: usize,
    /// Events dropped because the queue was full (oldest first).
    pub dropped: u64,
    /// Events ever enqueued (dropped ones included).
    pub enqueued: u64,
}

#[derive(Debug)]
struct Queue {
    generation: u32,
    events: VecDeque<Arc<[u8]>>,
    capacity: usize,
    kinds: u64,
    instruments: Option<Vec<Box<str>>>,
    stats: QueueStats,
}

/// The hub (see the module docs).
#[derive(Debug, Default)]
pub struct Hub {
    slots: Vec<Option<Queue>>,
    generations: Vec<u32>,
    free: Vec<u32>,
    /// Subscribers that keep every instrument.
    everyone: Vec<u32>,
    /// Subscribers that keep some instruments, indexed by each.
    by_instrument: HashMap<Box<str>, Vec<u32>>,
    kinds: HashMap<Box<str>, u64>,
}

impl Hub {
    /// A hub with no subscriber.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Live subscriptions.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether there is no live subscription.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The mask of `kinds`, giving each kind not seen before the next bit; nothing is
    /// registered when they would pass [`MAX_KINDS`].
    fn kind_mask(&mut self, kinds: &[String]) -> Result<u64, HubError> {
        let mut fresh: Vec<&str> = kinds
            .iter()
            .map(String::as_str)
            .filter(|k| !self.kinds.contains_key(*k))
            .collect();
        fresh.sort_unstable();
        fresh.dedup();
        if let Some(over) = fresh.get(MAX_KINDS.saturating_sub(self.kinds.len())) {
            return Err(HubError::TooManyKinds {
                kind: (*over).to_owned(),
            });
        }
        for kind in fresh {
            let bit = 1u64 << self.kinds.len();
            self.kinds.insert(kind.into(), bit);
        }
        Ok(kinds
            .iter()
            .fold(0, |mask, k| mask | self.kinds[k.as_str()]))
    }

    /// Subscribe with a keep-predicate and a queue bound.
    ///
    /// # Errors
    /// [`HubError::BadCapacity`] for a zero bound, [`HubError::TooManyKinds`].
    pub fn subscribe(&mut self, filter: Filter, capacity: usize) -> Result<SubscriberId, HubError> {
        if capacity == 0 {
            return Err(HubError::BadCapacity { capacity });
        }
        let kinds = match &filter.kinds {
            None => u64::MAX,
            Some(kinds) => self.kind_mask(kinds)?,
        };
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.generations.push(0);
            u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
        });
        let generation = self.generations[slot as usize];
        let instruments: Option<Vec<Box<str>>> = filter
            .instruments
            .map(|ids| ids.into_iter().map(String::into_boxed_str).collect());
        match &instruments {
            None => self.everyone.push(slot),
            Some(ids) => {
                for id in ids {
                    let listed = self.by_instrument.entry(id.clone()).or_default();
                    if !listed.contains(&slot) {
                        listed.push(slot);
                    }
                }
            }
        }
        self.slots[slot as usize] = Some(Queue {
            generation,
            events: VecDeque::with_capacity(capacity.min(DEFAULT_QUEUE)),
            capacity,
            kinds,
            instruments,
            stats: QueueStats::default(),
        });
        Ok(u64::from(generation) << 32 | u64::from(slot))
    }

    fn queue(&self, id: SubscriberId) -> Result<&Queue, HubError> {
        let (slot, generation) = split(id);
        self.slots
            .get(slot as usize)
            .and_then(Option::as_ref)
            .filter(|q| q.generation == generation)
            .ok_or(HubError::UnknownSubscriber { id })
    }

    fn queue_mut(&mut self, id: SubscriberId) -> Result<&mut Queue, HubError> {
        let (slot, generation) = split(id);
        self.slots
            .get_mut(slot as usize)
            .and_then(Option::as_mut)
            .filter(|q| q.generation == generation)
            .ok_or(HubError::UnknownSubscriber { id })
    }

    /// End a subscription; its pending events are released.
    ///
    /// # Errors
    /// [`HubError::UnknownSubscriber`].
    pub fn unsubscribe(&mut self, id: SubscriberId) -> Result<(), HubError> {
        self.queue(id)?;
        let (slot, _) = split(id);
        let Some(queue) = self.slots[slot as usize].take() else {
            return Err(HubError::UnknownSubscriber { id });
        };
        match queue.instruments {
            None => self.everyone.retain(|&s| s != slot),
            Some(ids) => {
                for instrument in ids {
                    if let Some(listed) = self.by_instrument.get_mut(&instrument) {
                        listed.retain(|&s| s != slot);
                        if listed.is_empty() {
                            self.by_instrument.remove(&instrument);
                        }
                    }
                }
            }
        }
        self.generations[slot as usize] = self.generations[slot as usize].wrapping_add(1);
        self.free.push(slot);
        Ok(())
    }

    /// Offer one encoded event to every subscriber that keeps it. Never blocks: a full queue
    /// drops its oldest event. Subscribers whose queue was empty (so may be waiting) are
    /// pushed onto `woken`. Returns the number of queues the event entered.
    ///
    /// # Errors
    /// None today (a kind no subscriber named reaches the all-kind subscribers).
    pub fn publish(
        &mut self,
        kind: &str,
        instrument: &str,
        payload: &Arc<[u8]>,
        woken: &mut Vec<SubscriberId>,
    ) -> Result<usize, HubError> {
        let bit = self.kinds.get(kind).copied().unwrap_or(UNNAMED_KIND);
        let listed = self
            .by_instrument
            .get(instrument)
            .map_or(&[][..], Vec::as_slice);
        let mut entered = 0;
        for &slot in self.everyone.iter().chain(listed) {
            let Some(queue) = self.slots[slot as usize].as_mut() else {
                continue;
            };
            if queue.kinds & bit == 0 {
                continue;
            }
            if queue.events.is_empty() {
                woken.push(u64::from(queue.generation) << 32 | u64::from(slot));
            }
            if queue.events.len() >= queue.capacity {
                queue.events.pop_front();
                queue.stats.dropped += 1;
            }
            queue.events.push_back(Arc::clone(payload));
            queue.stats.enqueued += 1;
            entered += 1;
        }
        Ok(entered)
    }

    /// Move up to `max_events` pending events, oldest first, onto the end of `out` as one
    /// contiguous byte string (what a stream writes in one send). Returns how many moved.
    ///
    /// # Errors
    /// [`HubError::UnknownSubscriber`].
    pub fn drain_into(
        &mut self,
        id: SubscriberId,
        max_events: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, HubError> {
        let queue = self.queue_mut(id)?;
        let n = queue.events.len().min(max_events);
        out.reserve(queue.events.iter().take(n).map(|e| e.len()).sum());
        for event in queue.events.drain(..n) {
            out.extend_from_slice(&event);
        }
        Ok(n)
    }

    /// A subscriber's counters.
    ///
    /// # Errors
    /// [`HubError::UnknownSubscriber`].
    pub fn stats(&self, id: SubscriberId) -> Result<QueueStats, HubError> {
        let queue = self.queue(id)?;
        Ok(QueueStats {
            pending: queue.events.len(),
            ..queue.stats
        })
    }
}

const fn split(id: SubscriberId) -> (u32, u32) {
    ((id & 0xFFFF_FFFF) as u32, (id >> 32) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(text: &str) -> Arc<[u8]> {
        Arc::from(text.as_bytes())
    }

    fn keep(instruments: Option<&[&str]>, kinds: Option<&[&str]>) -> Filter {
        Filter {
            instruments: instruments.map(|v| v.iter().map(|s| (*s).to_owned()).collect()),
            kinds: kinds.map(|v| v.iter().map(|s| (*s).to_owned()).collect()),
        }
    }

    fn drain(hub: &mut Hub, id: SubscriberId) -> String {
        let mut out = Vec::new();
        assert!(hub.drain_into(id, usize::MAX, &mut out).is_ok());
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn a_full_queue_drops_its_oldest_and_counts_it() {
        let mut hub = Hub::new();
        let Ok(slow) = hub.subscribe(Filter::default(), 3) else {
            unreachable!()
        };
        let mut woken = Vec::new();
        for k in 0..5 {
            assert_eq!(
                hub.publish("bar", "A.X", &event(&k.to_string()), &mut woken),
                Ok(1)
            );
        }
        assert_eq!(woken, vec![slow]);
        assert_eq!(
            hub.stats(slow),
            Ok(QueueStats {
                pending: 3,
                dropped: 2,
                enqueued: 5
            })
        );
        assert_eq!(drain(&mut hub, slow), "234");
    }

    #[test]
    fn predicates_apply_at_enqueue_so_unrelated_traffic_never_evicts() {
        let mut hub = Hub::new();
        let Ok(one) = hub.subscribe(keep(Some(&["A.X"]), Some(&["trade"])), 2) else {
            unreachable!()
        };
        let Ok(all) = hub.subscribe(Filter::default(), 2) else {
            unreachable!()
        };
        let mut woken = Vec::new();
        assert_eq!(hub.publish("trade", "A.X", &event("a"), &mut woken), Ok(2));
        for _ in 0..10 {
            assert_eq!(hub.publish("trade", "B.X", &event("b"), &mut woken), Ok(1));
            assert_eq!(hub.publish("quote", "A.X", &event("q"), &mut woken), Ok(1));
        }
        assert_eq!(drain(&mut hub, one), "a");
        assert_eq!(drain(&mut hub, all), "bq");
        assert_eq!(hub.stats(one).map(|s| s.dropped), Ok(0));
    }

    #[test]
    fn an_ended_subscription_is_gone_and_its_slot_is_reused_safely() {
        let mut hub = Hub::new();
        let Ok(first) = hub.subscribe(keep(Some(&["A.X"]), None), 4) else {
            unreachable!()
        };
        assert_eq!(hub.unsubscribe(first), Ok(()));
        assert_eq!(
            hub.unsubscribe(first),
            Err(HubError::UnknownSubscriber { id: first })
        );
        let Ok(second) = hub.subscribe(Filter::default(), 4) else {
            unreachable!()
        };
        assert_ne!(first, second);
        assert!(hub.stats(first).is_err());
        let mut woken = Vec::new();
        assert_eq!(hub.publish("bar", "A.X", &event("x"), &mut woken), Ok(1));
        assert_eq!(hub.len(), 1);
    }

    #[test]
    #[allow(clippy::unwrap_used)] // a test: a refusal here is the failure
    fn refusals() {
        let mut hub = Hub::new();
        assert_eq!(
            hub.subscribe(Filter::default(), 0),
            Err(HubError::BadCapacity { capacity: 0 })
        );
        let named = |range: std::ops::Range<usize>| Filter {
            instruments: None,
            kinds: Some(range.map(|k| format!("k{k}")).collect()),
        };
        // A refused subscription registers none of its kinds.
        assert!(matches!(
            hub.subscribe(named(0..MAX_KINDS + 1), 4),
            Err(HubError::TooManyKinds { .. })
        ));
        assert!(hub.kinds.is_empty() && hub.is_empty());
        let some = hub.subscribe(named(0..MAX_KINDS), 4).unwrap();
        assert!(matches!(
            hub.subscribe(named(MAX_KINDS..MAX_KINDS + 1), 4),
            Err(HubError::TooManyKinds { .. })
        ));
        // Publishing kinds nobody named claims no bit and reaches only all-kind subscribers.
        let all = hub.subscribe(Filter::default(), 4).unwrap();
        let mut woken = Vec::new();
        for k in 0..100 {
            let entered = hub
                .publish(&format!("new{k}"), "A.X", &event("x"), &mut woken)
                .unwrap();
            assert_eq!(entered, 1);
        }
        assert_eq!(hub.publish("k0", "A.X", &event("x"), &mut woken), Ok(2));
        assert_eq!(hub.kinds.len(), MAX_KINDS);
        assert!(hub.stats(some).is_ok() && hub.stats(all).is_ok());
    }
}
