//! The delta writer: per (instrument, resolution), the values last published, and after a
//! minute close the `svc.feature_row_delta` document of every row whose values changed,
//! encoded once into one buffer.
//!
//! A row's delta is its current values against the ones last published for it: a key whose
//! value is new or changed (a change to ABSENT included) is an UPSERT, a key published
//! before that the universe no longer has (its feature left the registry) a RETIRE, in key
//! order. A row whose close time moved with no such key gets a document with no operations
//! (a client's row keeps the close time a snapshot shows); a row with neither gets none.
//! Comparing with what was published,
//! not with the previous minute, means a document is never lost to a refused close: the next
//! one of that row carries every change since.
//!
//! Keys are the union of every selection seen, sorted, so a universe of another selection
//! (a registry change) retires the keys it lacks; [`DeltaWriter::refresh`] publishes that
//! change for every row at once.

use super::batch::Deltas;
use super::delta_rows::{Published, Shared};
use super::encode::{self, KeyPieces};
use super::ids::{check_ids, check_rows, register, take_visit_order};
use crate::bars::{Bar, Resolution};
use crate::features::universe::threads::{pool, THREADS};
use crate::features::{FeatureError, FeatureValue, Universe, Updated};

/// Rows per instrument: one per resolution.
const RESOLUTIONS: usize = Resolution::ALL.len();

/// The published side of a screener's feature rows (see the module docs).
#[derive(Debug, Default, Clone)]
pub struct DeltaWriter {
    /// Per instrument index, the document's head (its id rendered), once registered.
    heads: Vec<Option<Box<[u8]>>>,
    /// Every key ever seen, sorted.
    keys: Vec<Box<str>>,
    pieces: Vec<KeyPieces>,
    /// The universe's keys in the order its rows are visited (selection, then output order),
    /// and each one's place in `keys`.
    visited: Vec<Box<str>>,
    place: Vec<usize>,
    /// Row `(instrument * 7 + resolution)`'s published values, `keys.len()` apiece (`None`:
    /// never published, or retired).
    published: Vec<Option<FeatureValue>>,
    /// Row `(instrument * 7 + resolution)`'s published close time (`None`: none yet).
    stamps: Vec<Option<u64>>,
}

impl DeltaWriter {
    /// A writer that has published nothing: a row's first document upserts every key.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Name instrument `index` (its documents' `instrument_id`): indexes in order from 0, as
    /// [`Universe::add`] returns them. Renaming keeps what was published for it.
    ///
    /// # Errors
    /// [`FeatureError::InvalidInstrumentId`] for an id the schemas refuse,
    /// [`FeatureError::InstrumentIndexGap`] for an index past the next one.
    pub fn register(&mut self, index: u32, instrument_id: &str) -> Result<(), FeatureError> {
        let instruments = register(&mut self.heads, index, instrument_id, encode::head)?;
        let rows = instruments * RESOLUTIONS;
        self.published.resize(rows * self.keys.len(), None);
        self.stamps.resize(rows, None);
        Ok(())
    }

    /// Close one minute of `universe` ([`Universe::close_minute`]) and encode into `out`
    /// (cleared first) the delta of every row it changed.
    ///
    /// # Errors
    /// [`FeatureError::UnregisteredInstrument`] when an instrument of the universe has no id
    /// (nothing is closed then), else the close's refusal: the rows it changed before are
    /// left to the next document of each.
    pub fn close_minute(
        &mut self,
        universe: &mut Universe,
        bars: &[(u32, Bar)],
        out: &mut Deltas,
    ) -> Result<(), FeatureError> {
        check_ids(&self.heads, universe)?;
        out.reset(1);
        let mut updated = Vec::with_capacity(bars.len() * RESOLUTIONS);
        let closed = universe.close_minute(bars, &mut updated);
        self.encode(universe, &updated, out)?;
        closed
    }

    /// [`Universe::advance`] to `watermark`, then as [`Self::close_minute`].
    ///
    /// # Errors
    /// As [`Self::close_minute`].
    pub fn advance(
        &mut self,
        universe: &mut Universe,
        watermark: u64,
        out: &mut Deltas,
    ) -> Result<(), FeatureError> {
        check_ids(&self.heads, universe)?;
        let mut updated = Vec::new();
        let advanced = universe.advance(watermark, &mut updated);
        self.encode(universe, &updated, out)?;
        advanced
    }

    /// The delta of each of `rows` (what a close or an advance of `universe` reported
    /// changed) against what was published, into `out` (cleared).
    ///
    /// # Errors
    /// [`FeatureError::UnregisteredInstrument`], [`FeatureError::UnknownInstrument`] for a row
    /// outside the universe.
    pub fn deltas(
        &mut self,
        universe: &Universe,
        rows: &[Updated],
        out: &mut Deltas,
    ) -> Result<(), FeatureError> {
        check_ids(&self.heads, universe)?;
        check_rows(universe, rows)?;
        self.encode(universe, rows, out)
    }

    /// The delta of every row of `universe` against what was published (after a registry
    /// change: the keys it lacks retire, the ones it adds upsert), into `out` (cleared).
    ///
    /// # Errors
    /// [`FeatureError::UnregisteredInstrument`].
    pub fn refresh(&mut self, universe: &Universe, out: &mut Deltas) -> Result<(), FeatureError> {
        check_ids(&self.heads, universe)?;
        let rows: Vec<Updated> = (0..universe.len())
            .flat_map(|i| {
                Resolution::ALL.map(|resolution| Updated {
                    instrument: u32::try_from(i).unwrap_or(u32::MAX),
                    resolution,
                })
            })
            .collect();
        self.encode(universe, &rows, out)
    }

    /// Take `universe`'s selection: its keys join the union (published rows re-laid out when
    /// a key is new), and its visit order is mapped onto them.
    fn adopt_keys(&mut self, universe: &Universe) {
        if !take_visit_order(universe, &mut self.visited) {
            return;
        }
        let mut keys = self.keys.clone();
        keys.extend(self.visited.iter().cloned());
        keys.sort_unstable();
        keys.dedup();
        if keys != self.keys {
            let (old, new) = (self.keys.len(), keys.len());
            let moved: Vec<usize> = self
                .keys
                .iter()
                .map(|k| keys.binary_search(k).unwrap_or(0))
                .collect();
            let rows = self.heads.len() * RESOLUTIONS;
            let mut published = vec![None; rows * new];
            for row in 0..rows {
                for (k, &to) in moved.iter().enumerate() {
                    published[row * new + to] = self.published[row * old + k];
                }
            }
            self.published = published;
            self.pieces = keys.iter().map(|k| KeyPieces::new(k)).collect();
            self.keys = keys;
        }
        self.place = self
            .visited
            .iter()
            .map(|k| self.keys.binary_search(k).unwrap_or(0))
            .collect();
    }

    /// Encode the delta of each of `rows` (ids checked) into `out`, cleared first. Many rows
    /// in instrument order are cut at instrument boundaries and encoded on the close's threads
    /// (each part its own rows of `published` and its own buffer).
    fn encode(
        &mut self,
        universe: &Universe,
        rows: &[Updated],
        out: &mut Deltas,
    ) -> Result<(), FeatureError> {
        let framing = out.framing.take();
        let encoded = self.encode_framed(universe, rows, out, framing.as_deref());
        out.framing = framing;
        encoded
    }

    /// [`Self::encode`], each document framed with `framing` when given.
    fn encode_framed(
        &mut self,
        universe: &Universe,
        rows: &[Updated],
        out: &mut Deltas,
        framing: Option<&[u8]>,
    ) -> Result<(), FeatureError> {
        self.adopt_keys(universe);
        let width = self.keys.len();
        let shared = Shared {
            universe,
            heads: &self.heads,
            pieces: &self.pieces,
            place: &self.place,
            width,
            framing,
        };
        let ordered = rows.windows(2).all(|p| p[0].instrument <= p[1].instrument);
        let threads = if ordered && rows.len() >= PARALLEL_MIN {
            (*THREADS).min(MAX_THREADS)
        } else {
            1
        };
        let pool = (threads > 1).then(pool).flatten();
        let threads = if pool.is_some() { threads } else { 1 };
        out.reset(threads);
        let Some(pool) = pool else {
            let own = Published {
                values: &mut self.published,
                stamps: &mut self.stamps,
            };
            return shared.encode(rows, 0, own, &mut out.parts[0]);
        };
        // Cut `rows` into `threads` runs of whole instruments, and `published` with them.
        let stride = RESOLUTIONS * width;
        let mut jobs = Vec::with_capacity(threads);
        let (mut rest, mut published, mut stamps, mut first) =
            (rows, &mut self.published[..], &mut self.stamps[..], 0usize);
        for (k, part) in out.parts[..threads].iter_mut().enumerate() {
            let mut cut = rest.len().min(rest.len().div_ceil(threads - k));
            while cut < rest.len() && cut > 0 && rest[cut].instrument == rest[cut - 1].instrument {
                cut += 1;
            }
            let (mine, tail) = rest.split_at(cut);
            let end = tail
                .first()
                .map_or(published.len() / stride.max(1) + first, |r| {
                    r.instrument as usize
                });
            let (values, others) =
                std::mem::take(&mut published).split_at_mut((end - first) * stride);
            let (own_stamps, other_stamps) =
                std::mem::take(&mut stamps).split_at_mut((end - first) * RESOLUTIONS);
            let own = Published {
                values,
                stamps: own_stamps,
            };
            jobs.push((mine, first, own, part));
            (rest, published, stamps, first) = (tail, others, other_stamps, end);
        }
        let results: Vec<std::sync::Mutex<Result<(), FeatureError>>> = (0..threads)
            .map(|_| std::sync::Mutex::new(Ok(())))
            .collect();
        let mut jobs = jobs.into_iter().zip(&results);
        let here = jobs.next();
        pool.in_place_scope(|scope| {
            for ((mine, first, own, part), result) in jobs {
                let shared = &shared;
                scope.spawn(move |_| {
                    let done = shared.encode(mine, first, own, part);
                    *result
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = done;
                });
            }
            if let Some(((mine, first, own, part), result)) = here {
                let done = shared.encode(mine, first, own, part);
                *result
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = done;
            }
        });
        results.into_iter().try_for_each(|r| {
            r.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
    }
}

/// Rows at least this many encode on several threads (a midnight close of 1,000 instruments
/// is 7,000; a day minute 1,000).
const PARALLEL_MIN: usize = 512;

/// At most this many threads encode one call.
const MAX_THREADS: usize = 8;
