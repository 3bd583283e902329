//! What one call of the delta writer encoded: per thread that encoded, its documents back to
//! back in one buffer, with where each ends and its row.

use std::sync::Arc;

use crate::features::{FeatureValue, Updated};
use crate::json::CanonicalWriter;

/// Documents encoded by one call: one buffer per thread that encoded, documents back to back.
#[derive(Debug, Default)]
pub struct Deltas {
    pub(super) parts: Vec<Part>,
    /// Parts in use (the rest keep their allocations for the next call).
    used: usize,
    /// The SSE head documents are framed with (see [`Self::frame`]).
    pub(super) framing: Option<Box<[u8]>>,
}

/// One thread's documents.
#[derive(Debug, Default)]
pub(super) struct Part {
    pub(super) writer: CanonicalWriter,
    /// Where each document ends in the buffer.
    pub(super) ends: Vec<usize>,
    /// The row of each document.
    pub(super) rows: Vec<Updated>,
    /// The current row being compared, by place in the writer's keys.
    pub(super) current: Vec<Option<FeatureValue>>,
    /// When framing: each document's row and SSE event (`None`: the row has no bar yet).
    pub(super) frames: Vec<(Updated, Option<Arc<[u8]>>)>,
}

impl Part {
    fn clear(&mut self) {
        self.writer.clear();
        self.ends.clear();
        self.rows.clear();
        self.frames.clear();
    }

    fn iter(&self) -> impl Iterator<Item = (Updated, &[u8])> {
        let (bytes, ends) = (self.writer.as_bytes(), &self.ends);
        self.rows.iter().enumerate().map(move |(k, row)| {
            let start = k.checked_sub(1).map_or(0, |before| ends[before]);
            (*row, &bytes[start..ends[k]])
        })
    }
}

impl Deltas {
    /// No documents (keeps the allocations), room for `parts` threads' documents.
    pub(super) fn reset(&mut self, parts: usize) {
        if self.parts.len() < parts {
            self.parts.resize_with(parts, Part::default);
        }
        for part in &mut self.parts {
            part.clear();
        }
        self.used = parts;
    }

    /// Frame the documents of the next calls as SSE events headed `framing` (`id: ..\nevent:
    /// delta\ndata: `), kept instead of the documents (see [`Self::take_frames`]); `None`
    /// keeps the documents again.
    pub fn frame(&mut self, framing: Option<&[u8]>) {
        self.framing = framing.map(Into::into);
    }

    /// The framed events of the last call, in the order the rows changed, each with its row
    /// (`None`: a row with no bar yet, which a delta cannot stamp), taken out.
    pub fn take_frames(&mut self) -> impl Iterator<Item = (Updated, Option<Arc<[u8]>>)> + '_ {
        self.parts[..self.used]
            .iter_mut()
            .flat_map(|part| part.frames.drain(..))
    }

    /// Documents held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parts[..self.used].iter().map(|p| p.ends.len()).sum()
    }

    /// Whether none is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each document's row and bytes, in the order the rows changed.
    pub fn iter(&self) -> impl Iterator<Item = (Updated, &[u8])> {
        self.parts[..self.used].iter().flat_map(Part::iter)
    }
}
