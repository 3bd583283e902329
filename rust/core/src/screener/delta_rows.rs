//! One row's delta as the delta writer encodes it: the row's current values against the ones
//! last published, the document written when any value or the close time moved, and what it
//! carries published. A writer framing its documents (a live turn's) writes each as the SSE
//! event the hub queues, `<framing><document>\n\n`, and keeps the event instead of the
//! document (none for a row with no bar yet: its event is the whole row, written by the turn).

use std::sync::Arc;

use super::batch::Part;
use super::encode::{self, KeyPieces};
use crate::bars::Resolution;
use crate::features::{FeatureError, FeatureValue, Universe, Updated};

/// Rows per instrument: one per resolution.
const RESOLUTIONS: usize = Resolution::ALL.len();

/// The published side of a run of whole instruments: values and close times.
pub(super) struct Published<'a> {
    pub(super) values: &'a mut [Option<FeatureValue>],
    pub(super) stamps: &'a mut [Option<u64>],
}

/// What every part reads.
pub(super) struct Shared<'a> {
    pub(super) universe: &'a Universe,
    pub(super) heads: &'a [Option<Box<[u8]>>],
    pub(super) pieces: &'a [KeyPieces],
    pub(super) place: &'a [usize],
    pub(super) width: usize,
    /// The SSE head each document is framed with, when framing.
    pub(super) framing: Option<&'a [u8]>,
}

impl Shared<'_> {
    /// Encode `rows` into `part`; `published` holds the rows of instruments from `first` on.
    pub(super) fn encode(
        &self,
        rows: &[Updated],
        first: usize,
        mut published: Published<'_>,
        part: &mut Part,
    ) -> Result<(), FeatureError> {
        part.current.resize(self.width, None);
        for &row in rows {
            self.encode_row(row, first, &mut published, part)?;
        }
        Ok(())
    }

    /// One row's delta, if any value or its close time changed; what it carries becomes the
    /// published row.
    fn encode_row(
        &self,
        row: Updated,
        first: usize,
        published: &mut Published<'_>,
        part: &mut Part,
    ) -> Result<(), FeatureError> {
        let width = self.width;
        let current = &mut part.current;
        current.fill(None);
        let mut visited = 0;
        self.universe
            .for_each_value(row.instrument, row.resolution, |_, value| {
                current[self.place[visited]] = Some(value);
                visited += 1;
            })?;
        let i = row.instrument as usize;
        let slot = (i - first) * RESOLUTIONS + row.resolution as usize;
        let ts_event = self
            .universe
            .last_ts_event(row.instrument, row.resolution)?;
        let stamp = &mut published.stamps[slot];
        let published = &mut published.values[slot * width..(slot + 1) * width];
        let w = &mut part.writer;
        let start = w.pos();
        let head = self.heads[i].as_deref().unwrap_or_default();
        // A moved close time alone makes a document (with no operations): a client's row keeps
        // the close time a snapshot shows.
        let mut opened = *stamp != ts_event;
        if opened {
            self.open(w, start, head);
        }
        let mut operations = 0;
        for (k, (was, now)) in published.iter_mut().zip(current.iter()).enumerate() {
            if was == now {
                continue;
            }
            if !opened {
                self.open(w, start, head);
                opened = true;
            }
            if operations > 0 {
                w.comma();
            }
            operations += 1;
            match now {
                Some(value) => {
                    w.raw(&self.pieces[k].upsert);
                    encode::value(w, *value);
                    w.raw(b"}");
                }
                None => w.raw(&self.pieces[k].retire),
            }
            *was = *now;
        }
        if opened {
            *stamp = ts_event;
            encode::tail(w, row.resolution, ts_event.unwrap_or(0));
            if self.framing.is_some() {
                w.raw(b"\n\n");
                let event = ts_event.map(|_| Arc::from(&w.as_bytes()[start..]));
                w.at(start);
                part.frames.push((row, event));
            } else {
                part.ends.push(w.pos());
                part.rows.push(row);
            }
        }
        Ok(())
    }

    /// Start a document at `start`: its SSE head when framing, then `head`.
    fn open(&self, w: &mut crate::json::CanonicalWriter, start: usize, head: &[u8]) {
        w.at(start);
        if let Some(framing) = self.framing {
            w.raw(framing);
        }
        w.raw(head);
    }
}
