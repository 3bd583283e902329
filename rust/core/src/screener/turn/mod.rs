//! The screener's live minute close as one call per loop turn: the turn's raw event payloads
//! in (as the node streamed them), the rows closed, the stream's events framed for the hub and
//! the observer's documents out. The caller keeps the control: where a close jumps its
//! instrument's sequence the turn stops and the caller catches that instrument up from the
//! node's pages before it goes on; a payload the strict reader refuses hands the whole turn
//! to the caller's per-event path.
//!
//! Everything is done as the per-event path does it, in the same order on the same core calls
//! (see [`walk`] and [`fold`]), so the rows, the sequences, the events and the documents are
//! the same, and so is a refusal and what the rows took before it.

mod book;
mod event;
mod fold;
mod frame;
mod walk;

#[cfg(test)]
mod tests;

pub use book::Book;
pub use event::LiveBar;
pub use fold::Run;
pub use frame::Frame;
pub use walk::Stop;

use super::{DeltaWriter, Deltas, ObservationWriter};
use crate::features::{FeatureError, Universe};

/// What one turn takes: the rows' universe and book, and the listeners' writers (the stream's
/// delta writer with its buffer, the observer's writer), each when listening.
#[derive(Debug)]
pub struct Turn<'a> {
    /// The rows' universe.
    pub universe: &'a mut Universe,
    /// The rows' instruments.
    pub book: &'a mut Book,
    /// The stream's delta writer (every instrument registered) and the buffer it encodes in.
    pub deltas: Option<(&'a mut DeltaWriter, &'a mut Deltas)>,
    /// The observer's writer (every instrument registered).
    pub observations: Option<&'a mut ObservationWriter>,
}

/// What a turn did: its runs (one version step each), the newest close time offered, where
/// it stopped, and the refusal that stopped it early (after the runs).
#[derive(Debug)]
pub struct Outcome {
    /// The runs folded, in order.
    pub runs: Vec<Run>,
    /// The newest close time among the closes walked (`None`: none, or refused).
    pub offered: Option<u64>,
    /// Where the turn stopped.
    pub stop: Stop,
    /// A refusal of the fold or of a listener.
    pub error: Option<FeatureError>,
}

impl Turn<'_> {
    /// Take `payloads` of feed `feed` (its node's base URL), the rows at version `version`.
    #[must_use]
    pub fn take(mut self, feed: &str, payloads: &[&[u8]], version: u64) -> Outcome {
        let walked = walk::walk(payloads, feed, self.book, self.universe);
        let mut runs = Vec::new();
        let error = self.fold(&walked.bars, version, &mut runs).err();
        Outcome {
            runs,
            offered: walked.offered,
            stop: walked.stop,
            error,
        }
    }
}
