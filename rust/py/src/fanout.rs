//! The fan-out hub for Python (`Hub`): publish an encoded event once, drain a subscriber's
//! pending events as one byte string. Waking waiting consumers is the caller's (asyncio's):
//! `publish` names the subscribers whose queue was empty; `publish_frames` offers a screener
//! turn's events in one call. Convert, call core, return.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use spine_core::fanout::{Filter, Hub, SubscriberId, DEFAULT_QUEUE};

use crate::errors::hub_error;
use crate::int_args;
use crate::turn::PyFrames;

/// Subscribers, each with one bounded queue (oldest dropped first) and a keep-predicate.
#[pyclass(module = "spine._core", name = "Hub")]
pub struct PyHub {
    inner: Hub,
    woken: Vec<SubscriberId>,
}

#[pymethods]
impl PyHub {
    #[new]
    fn new() -> Self {
        Self {
            inner: Hub::new(),
            woken: Vec::new(),
        }
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Subscribe; `instruments` / `kinds` of `None` keep everything. Returns the id.
    #[pyo3(signature = (*, instruments = None, kinds = None, capacity = DEFAULT_QUEUE))]
    fn subscribe(
        &mut self,
        py: Python<'_>,
        instruments: Option<Vec<String>>,
        kinds: Option<Vec<String>>,
        #[pyo3(from_py_with = int_args::hub_count)] capacity: usize,
    ) -> PyResult<SubscriberId> {
        let filter = Filter { instruments, kinds };
        self.inner
            .subscribe(filter, capacity)
            .map_err(|e| hub_error(py, &e))
    }

    /// End a subscription.
    fn unsubscribe(
        &mut self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::hub_id)] id: SubscriberId,
    ) -> PyResult<()> {
        self.inner.unsubscribe(id).map_err(|e| hub_error(py, &e))
    }

    /// Offer one encoded event (copied once, then shared by every queue) to the subscribers
    /// that keep it. Returns the ids whose queue was empty: the ones a consumer may be
    /// waiting on.
    fn publish(
        &mut self,
        py: Python<'_>,
        kind: &str,
        instrument_id: &str,
        payload: &[u8],
    ) -> PyResult<Vec<SubscriberId>> {
        let event: Arc<[u8]> = Arc::from(payload);
        self.woken.clear();
        self.inner
            .publish(kind, instrument_id, &event, &mut self.woken)
            .map_err(|e| hub_error(py, &e))?;
        Ok(self.woken.clone())
    }

    /// Offer a turn's stream events in order, as `publish` one after the other (detached).
    /// Returns the ids whose queue was empty at their first event, each once.
    fn publish_frames(
        &mut self,
        py: Python<'_>,
        frames: PyRef<'_, PyFrames>,
    ) -> PyResult<Vec<SubscriberId>> {
        let (hub, woken, frames) = (&mut self.inner, &mut self.woken, &frames.frames);
        woken.clear();
        py.detach(|| {
            frames.iter().try_for_each(|f| {
                hub.publish(f.resolution.name(), &f.instrument, &f.bytes, woken)
                    .map(drop)
            })
        })
        .map_err(|e| hub_error(py, &e))?;
        let mut seen = std::collections::HashSet::with_capacity(woken.len());
        Ok(woken
            .iter()
            .copied()
            .filter(|id| seen.insert(*id))
            .collect())
    }

    /// Up to `max_events` pending events (all by default), oldest first, as one byte string.
    #[pyo3(signature = (id, max_events = usize::MAX))]
    fn drain<'py>(
        &mut self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::hub_id)] id: SubscriberId,
        #[pyo3(from_py_with = int_args::hub_count)] max_events: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        self.inner
            .drain_into(id, max_events, &mut out)
            .map_err(|e| hub_error(py, &e))?;
        Ok(PyBytes::new(py, &out))
    }

    /// A subscriber's counters: (pending, dropped, enqueued).
    fn stats(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::hub_id)] id: SubscriberId,
    ) -> PyResult<(usize, u64, u64)> {
        let s = self.inner.stats(id).map_err(|e| hub_error(py, &e))?;
        Ok((s.pending, s.dropped, s.enqueued))
    }
}
