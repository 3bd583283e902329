//! Folding a walk's closes as the per-event path folds them: runs in which no instrument comes
//! twice, in turn (an instrument that missed a minute brings it with the next), each one in
//! instrument order: every bar's minute observed, one universe close, the sequences raised,
//! then what the rows' listeners made of the change: the stream's events (deltas, and a whole
//! row for a changed row with no bar yet) and the observer's pattern documents.

use std::sync::Arc;

use super::event::LiveBar;
use super::frame::{self, Frame};
use super::Turn;
use crate::bars::{Bar, Resolution, MINUTE_NS};
use crate::features::{FeatureError, Updated};

/// One run's change: what a version step of the rows carries.
#[derive(Debug, Default)]
pub struct Run {
    /// The rows the close changed (per instrument: 1m first, then coarser).
    pub changed: Vec<Updated>,
    /// The stream's events, in the order published.
    pub frames: Vec<Frame>,
    /// The observer's `svc.pattern_observation` documents, in row then pattern order.
    pub observations: Vec<Vec<u8>>,
    /// Bars folded.
    pub bars: usize,
    /// The newest close among them.
    pub newest: u64,
}

impl Turn<'_> {
    /// Fold `bars`, run after run, each run's change pushed onto `runs` (its version the one
    /// after `version` and the runs before it).
    ///
    /// # Errors
    /// An observe or close refusal (that run's change is not pushed: the rows took part of
    /// it, as the per-event path leaves them), or the listeners' (the run is pushed with what
    /// they made before it).
    pub(super) fn fold(
        &mut self,
        bars: &[LiveBar],
        version: u64,
        runs: &mut Vec<Run>,
    ) -> Result<(), FeatureError> {
        let mut stamp = vec![0u32; self.universe.len()];
        let mut rest = bars;
        let mut number = 0u32;
        while !rest.is_empty() {
            number += 1;
            let cut = rest
                .iter()
                .position(|b| {
                    let seen = stamp.get_mut(b.instrument as usize);
                    match seen {
                        Some(seen) if *seen == number => true,
                        Some(seen) => {
                            *seen = number;
                            false
                        }
                        None => false,
                    }
                })
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(cut);
            rest = tail;
            let at = version + runs.len() as u64 + 1;
            let mut out = self.close(run)?;
            let heard = self.listen(&mut out, at);
            runs.push(out);
            heard?;
        }
        Ok(())
    }

    /// One run closed: observed, closed in instrument order, sequences raised.
    fn close(&mut self, run: &[LiveBar]) -> Result<Run, FeatureError> {
        let mut minute: Vec<(u32, Bar)> = run.iter().map(|b| (b.instrument, b.bar)).collect();
        minute.sort_by_key(|&(instrument, _)| instrument);
        for &(instrument, bar) in &minute {
            self.universe
                .observe(instrument, bar.ts_event - MINUTE_NS, bar.ts_event)?;
        }
        let mut changed = Vec::with_capacity(minute.len() * Resolution::ALL.len());
        self.universe.close_minute(&minute, &mut changed)?;
        for b in run {
            self.book.raise(b.instrument, b.sequence);
        }
        Ok(Run {
            changed,
            frames: Vec::new(),
            observations: Vec::new(),
            bars: run.len(),
            newest: run.iter().map(|b| b.bar.ts_event).max().unwrap_or(0),
        })
    }

    /// The listeners' part of a run at `version`: the stream's events, then the observer's.
    fn listen(&mut self, run: &mut Run, version: u64) -> Result<(), FeatureError> {
        if let Some((writer, deltas)) = self.deltas.as_mut() {
            deltas.frame(Some(&frame::head(version, "delta")));
            let written = writer.deltas(self.universe, &run.changed, deltas);
            for (row, event) in deltas.take_frames() {
                let instrument = self.book.name(row.instrument)?;
                let bytes = match event {
                    Some(bytes) => bytes,
                    None => frame::row(version, self.universe, row, instrument)?,
                };
                run.frames.push(Frame {
                    resolution: row.resolution,
                    instrument: Arc::clone(instrument),
                    bytes,
                });
            }
            deltas.frame(None);
            written?;
        }
        if let Some(writer) = self.observations.as_mut() {
            writer.observe(self.universe, &run.changed, &mut run.observations)?;
        }
        Ok(())
    }
}
