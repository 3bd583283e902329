//! The screener's instruments as a live turn reads them: each one's id, the feed (node) that
//! serves its bars, and the newest node sequence folded for it. Indexes are the universe's: an
//! instrument is added here as it is added there.

use std::collections::HashMap;
use std::sync::Arc;

use crate::bars::BarsError;
use crate::features::FeatureError;

/// See the module docs.
#[derive(Debug, Default, Clone)]
pub struct Book {
    /// Instrument index by id.
    index: HashMap<Arc<str>, u32>,
    /// Per instrument index: its id, its feed, the newest sequence folded (`None`: none yet).
    names: Vec<Arc<str>>,
    feed: Vec<u32>,
    sequence: Vec<Option<u64>>,
    /// The feeds' names (their nodes' base URLs), by feed number.
    feeds: Vec<Box<str>>,
}

impl Book {
    /// A book with no instrument.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Instruments held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no instrument is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Add instrument `instrument_id`, served by feed `feed`; returns its index (the next one).
    /// An id already held keeps its first index (the caller refuses a second add).
    pub fn add(&mut self, instrument_id: &str, feed: &str) -> u32 {
        let number = match self.feeds.iter().position(|f| &**f == feed) {
            Some(k) => k,
            None => {
                self.feeds.push(feed.into());
                self.feeds.len() - 1
            }
        };
        let index = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let name: Arc<str> = instrument_id.into();
        self.index.entry(Arc::clone(&name)).or_insert(index);
        self.names.push(name);
        self.feed.push(u32::try_from(number).unwrap_or(u32::MAX));
        self.sequence.push(None);
        index
    }

    /// The number of feed `feed` (`None`: it serves no instrument).
    pub(super) fn feed_number(&self, feed: &str) -> Option<u32> {
        let k = self.feeds.iter().position(|f| &**f == feed)?;
        u32::try_from(k).ok()
    }

    /// The index of `instrument_id` when feed number `feed` serves it.
    pub(super) fn served(&self, instrument_id: &str, feed: u32) -> Option<u32> {
        let index = *self.index.get(instrument_id)?;
        (self.feed[index as usize] == feed).then_some(index)
    }

    /// The id of instrument `index`.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn name(&self, index: u32) -> Result<&Arc<str>, FeatureError> {
        self.names
            .get(index as usize)
            .ok_or(FeatureError::UnknownInstrument {
                index: index as usize,
                len: self.len(),
            })
    }

    /// The newest sequence folded for instrument `index` (`None`: none yet).
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn sequence(&self, index: u32) -> Result<Option<u64>, FeatureError> {
        self.sequence
            .get(index as usize)
            .copied()
            .ok_or(FeatureError::UnknownInstrument {
                index: index as usize,
                len: self.len(),
            })
    }

    /// Set (or with `None` forget) the newest sequence folded for instrument `index`.
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`].
    pub fn set_sequence(&mut self, index: u32, sequence: Option<u64>) -> Result<(), FeatureError> {
        let len = self.len();
        let slot =
            self.sequence
                .get_mut(index as usize)
                .ok_or(FeatureError::UnknownInstrument {
                    index: index as usize,
                    len,
                })?;
        *slot = sequence;
        Ok(())
    }

    /// Raise instrument `indexes[k]`'s sequence to `sequences[k]` for each `k` (a fold took
    /// those bars).
    ///
    /// # Errors
    /// [`FeatureError::UnknownInstrument`] (nothing is raised), or
    /// [`BarsError::LengthMismatch`].
    pub fn raise_all(&mut self, indexes: &[u32], sequences: &[u64]) -> Result<(), FeatureError> {
        if indexes.len() != sequences.len() {
            return Err(BarsError::LengthMismatch {
                expected: indexes.len(),
                lengths: vec![sequences.len()],
            }
            .into());
        }
        if let Some(&index) = indexes.iter().find(|&&i| i as usize >= self.len()) {
            return Err(FeatureError::UnknownInstrument {
                index: index as usize,
                len: self.len(),
            });
        }
        for (&index, &sequence) in indexes.iter().zip(sequences) {
            self.raise(index, sequence);
        }
        Ok(())
    }

    /// Raise instrument `index`'s sequence to `sequence` (a fold took that bar); an index
    /// outside the book is ignored (the walk only names held ones).
    pub(super) fn raise(&mut self, index: u32, sequence: u64) {
        if let Some(slot) = self.sequence.get_mut(index as usize) {
            *slot = Some(slot.map_or(sequence, |held| held.max(sequence)));
        }
    }
}
