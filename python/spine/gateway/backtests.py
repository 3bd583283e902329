"""The backtest routes the gateway answers from its database: submit (a sealed body; the job
is queued for a ``spine worker``, never run here), the job list and detail, cancel, the
report and a finished run's outputs, the job's events (paged, and live on
``/v2/stream/backtests?job_id=``), and the v1 records (signals, chart markers, retirements,
engine status) runs produced.

The job's states are the store's (:mod:`spine.jobs.store`). The run itself, its identities
(run_id, result_hash) and its documents are the worker's (:mod:`spine.backtest`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

import msgspec

from spine.gateway.job_streams import JobStreams, Waiter
from spine.gateway.pages import db_page, page_document
from spine.gateway.runnable import Run, RunChecks
from spine.gateway.strategies import IDENTITY
from spine.http.app import Relayed
from spine.http.bodies import BacktestBody
from spine.http.errors import HttpError
from spine.http.request import I63, Query
from spine.http.streams import SSE, heartbeat
from spine.http.v1 import V1_VERSION
from spine.jobs import documents
from spine.jobs.records import JOB_STATES, AlreadyFinished, JobState, NotFound
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store
from spine.jobs.submission import RequestRefused, build_request, check_body, submit_request
from spine.reasons import scrub
from spine.wire.outputs import SERVED_PARTS, OutputPart, served_part

__all__ = ["BacktestHandlers", "revision_files"]

P = ParamSpec("P")
T = TypeVar("T")

_encode = msgspec.json.Encoder().encode
#: The v1 record kinds and the output part that holds them.
_V1_PARTS = {"signals": OutputPart.SIGNALS, "chart_markers": OutputPart.MARKERS, "retirements": OutputPart.RETIREMENTS}
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED")
#: How often the live job streams' one poller looks at their jobs (:mod:`spine.gateway.job_streams`).
POLL_SECS = 0.1


class BacktestHandlers:
    def __init__(
        self,
        store: Store,
        gateway_id: str,
        execution: ExecutionConfig,
        heartbeat_secs: float,
        relay_engine_status: Callable[[Query, dict[str, str]], Awaitable[Relayed]],
        instrument_check: Callable[[str], bool] | None = None,
        run_checks: RunChecks | None = None,
        job_stream_subscribers: int = 1_024,
    ) -> None:
        self.store = store
        #: What a run would lack, refused at submit (:mod:`spine.gateway.runnable`).
        self.run_checks = run_checks
        #: Validation's instrument check (as ``GET /v2/strategies/{id}/validate`` makes it).
        self.instrument_check = instrument_check
        self.watch = JobStreams(store.job_positions, POLL_SECS, job_stream_subscribers)
        self.gateway_id = gateway_id
        self.execution = execution
        self.heartbeat_secs = heartbeat_secs
        self.relay_engine_status = relay_engine_status

    # submit

    async def backtests_submit(self, query: Query, params: dict[str, str], body: BacktestBody) -> Relayed:
        now = time.time_ns()
        _refused(check_body, body, now)  # before any lookup: what the body gets wrong on its own
        revision_id, files = await self._revision(body)
        request = await asyncio.to_thread(
            _refused, build_request, body, revision_id, files, self.execution, now, self.instrument_check
        )
        if self.run_checks is not None:
            spec = request.spec
            await self.run_checks.check(
                Run(
                    request.instruments,
                    spec.resolution,
                    spec.channel,
                    int(spec.start),
                    int(spec.end),
                    request.plan.quantity,
                )
            )
        job = await asyncio.to_thread(submit_request, self.store, request, self.gateway_id, now)
        return Relayed(202, _encode(documents.receipt(job, request.config_hash)))

    async def _revision(self, body: BacktestBody) -> tuple[str, dict[str, str]]:
        return await revision_files(self.store, "POST /v2/backtests", body.strategy_id, body.revision_id)

    # jobs

    async def backtests_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        state = cast(JobState | None, query.choice("state", JOB_STATES))
        strategy_id = query.text("strategy_id")
        route = f"/v2/backtests?{strategy_id}&{state}"
        rows, cursor = await db_page(
            query, route, lambda offset, limit: self.store.jobs(offset, limit, strategy_id=strategy_id, state=state)
        )
        return page_document(
            "svc.backtest_job_page",
            [documents.summary(row) for row in rows],
            cursor,
            2,
            runs={row.job_id: documents.run(row) for row in rows},
        )

    async def backtests_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return documents.detail(await self._job(params["id"]))

    async def backtests_request(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return documents.request(await self._job(params["id"]))

    async def backtests_cancel(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        job = await self._job(params["id"])
        try:
            await asyncio.to_thread(self.store.request_cancel, job.job_id, time.time_ns())
        except AlreadyFinished as finished:
            raise HttpError(
                "CONFLICT", f"job {job.job_id} is {finished.state}; only a QUEUED or RUNNING job can be cancelled"
            ) from None
        self.watch.notify(job.job_id)
        return documents.detail(await self._job(job.job_id))

    async def backtests_report(self, query: Query, params: dict[str, str]) -> bytes:
        job = await self._finished(params["id"], "report")
        rows = await asyncio.to_thread(self.store.outputs, job.job_id, OutputPart.REPORT, 0, 1)
        return rows[0]

    async def backtests_outputs(self, query: Query, params: dict[str, str]) -> bytes:
        part = served_part(params["part"])
        if part is None:
            raise HttpError("NOT_FOUND", f"no output {params['part']!r}; outputs: {', '.join(SERVED_PARTS)}")
        job = await self._finished(params["id"], part)
        rows, cursor = await db_page(
            query,
            f"/v2/backtests/{job.job_id}/outputs/{part}",
            lambda offset, limit: self.store.outputs(job.job_id, part, offset, limit),
        )
        head = _encode(
            page_document("svc.backtest_output_page", [], cursor, job_id=job.job_id, run_id=job.run_id, part=part)
        )
        return _splice_items(head, rows)

    async def backtests_events(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        job = await self._job(params["id"])
        after = query.sequence("after_sequence", I63) or 0
        rows, cursor = await db_page(
            query,
            f"/v2/backtests/{job.job_id}/events?{after}",
            lambda offset, limit: self.store.events(job.job_id, after + offset, limit),
        )
        return page_document(
            "svc.backtest_event_page", [documents.event(row) for row in rows], cursor, job_id=job.job_id
        )

    # the live job stream

    async def stream(self, query: Query, proto: Any) -> None:
        """The job's events above ``after_sequence`` in order, then live, one ``state`` or
        ``log`` event each (``id:`` its sequence), heartbeats between; the stream ends after
        the job's final state, at once when the job had already ended. It reads the database
        only when :class:`JobStreams` says the job moved."""
        job_id = query.text("job_id")
        if job_id is None:
            raise HttpError(
                "INVALID_PARAMETER",
                "GET /v2/stream/backtests needs job_id (a job's id, from POST /v2/backtests or GET /v2/backtests)",
            )
        job = await self._job(job_id)
        after = query.sequence("after_sequence", I63) or 0
        if self.watch.full():
            raise HttpError(
                "SUBSCRIBERS_FULL", f"the job streams have their {self.watch.limit} subscribers; retry later"
            )
        with self.watch.watching(job.job_id) as waiter:
            waiter.state = job.state
            transport = proto.response_stream(200, SSE)
            disconnected = asyncio.ensure_future(proto.client_disconnect())
            try:
                await self._follow(job.job_id, after, waiter, transport, disconnected)
            finally:
                disconnected.cancel()

    async def _follow(
        self, job_id: str, after: int, waiter: Waiter, transport: Any, disconnected: asyncio.Future[Any]
    ) -> None:
        last_write, look = time.monotonic(), True
        while not disconnected.done():
            rows = []
            if look:
                waiter.moved = False
                rows = await asyncio.to_thread(self.store.events, job_id, after, 500)
            chunk = b"".join(_frame(documents.event(row)) for row in rows)
            if rows:
                after = waiter.known = rows[-1].sequence
            elif time.monotonic() - last_write >= self.heartbeat_secs:
                chunk = heartbeat("spine.v2")
            if chunk:
                try:
                    await transport.send_bytes(chunk)
                except Exception:  # noqa: BLE001 - the client went away mid-send
                    return
                last_write = time.monotonic()
            if any(row.type == "STATE" and row.state in TERMINAL for row in rows):
                return
            if look and not rows and waiter.state in TERMINAL:
                return  # ended before the stream's point (after_sequence at or past its last event)
            if len(rows) < 500:
                quiet = time.monotonic() - last_write
                await asyncio.wait(
                    (disconnected,), timeout=min(self.watch.poll_secs, max(0.0, self.heartbeat_secs - quiet))
                )
            look = len(rows) == 500 or waiter.moved

    # v1 records

    async def _records(self, kind: str, query: Query) -> dict[str, Any]:
        job_id = query.text("job_id")
        if job_id is not None:
            await self._job(job_id)
        part = _V1_PARTS[kind]
        rows, cursor = await db_page(
            query, f"/{kind}?{job_id}", lambda offset, limit: self.store.records(part, offset, limit, job_id=job_id)
        )
        return {
            "version": V1_VERSION,
            "schema_id": "v1.records",
            "schema_version": 1,
            "kind": kind,
            "items": [msgspec.json.decode(row) for row in rows],
            "next_cursor": cursor,
        }

    async def v1_signals_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._records("signals", query)

    async def v1_chart_markers_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._records("chart_markers", query)

    async def v1_retirements_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._records("retirements", query)

    async def v1_engine_status_get(self, query: Query, params: dict[str, str]) -> Any:
        """With ``job_id``: that run's latest engine status (null before its run starts);
        without: the node's own, relayed."""
        job_id = query.text("job_id")
        if job_id is None:
            return await self.relay_engine_status(query, params)
        job = await self._job(job_id)
        rows = await asyncio.to_thread(self.store.last_output, job.job_id, OutputPart.ENGINE_STATUS)
        status = None if rows is None else msgspec.json.decode(rows)
        if isinstance(status, dict) and isinstance(status.get("last_error"), str):
            status["last_error"] = scrub(status["last_error"])  # a run's before public reasons
        return {"version": V1_VERSION, "schema_id": "v1.engine_status", "schema_version": 1, "engine_status": status}

    # lookups

    async def _job(self, job_id: str) -> Any:
        if not IDENTITY.fullmatch(job_id):
            raise HttpError("INVALID_PARAMETER", f"job id {job_id!r}: a job id is 64 lowercase hex digits")
        try:
            return await asyncio.to_thread(self.store.job, job_id)
        except NotFound:
            raise HttpError("NOT_FOUND", f"no backtest job {job_id}; GET /v2/backtests lists them") from None

    async def _finished(self, job_id: str, what: str) -> Any:
        job = await self._job(job_id)
        if job.state != "COMPLETED":
            raise HttpError(
                "CONFLICT",
                f"job {job.job_id} is {job.state}: its {what} exists once it is COMPLETED"
                + (f" (last error: {scrub(job.last_error)})" if job.last_error else ""),
            )
        return job


async def revision_files(
    store: Store, route: str, strategy_id: str, revision_id: str | None
) -> tuple[str, dict[str, str]]:
    """The revision a body names (null: the strategy's head now) and its files; 404 for a
    strategy or revision that does not exist."""
    try:
        strategy = await asyncio.to_thread(store.strategy, strategy_id)
    except NotFound:
        raise HttpError("NOT_FOUND", f"{route}: no strategy {strategy_id!r}") from None
    revision_id = revision_id or strategy.head_revision_id
    try:
        return revision_id, await asyncio.to_thread(store.revision_texts, strategy_id, revision_id)
    except NotFound:
        raise HttpError("NOT_FOUND", f"{route}: strategy {strategy_id!r} has no revision {revision_id}") from None


def _refused(step: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``step(*args, **kwargs)``, its :class:`RequestRefused` answered as the route's 400."""
    try:
        return step(*args, **kwargs)
    except RequestRefused as refused:
        raise HttpError(refused.symbol, f"POST /v2/backtests: {refused.text}") from None


def _frame(event: dict[str, Any]) -> bytes:
    name = "state" if event["type"] == "STATE" else "log"
    return (
        b"event: "
        + name.encode()
        + b"\nid: "
        + str(event["sequence"]).encode()
        + b"\ndata: "
        + _encode(event)
        + b"\n\n"
    )


def _splice_items(head: bytes, items: list[bytes]) -> bytes:
    """The page ``head`` (encoded with no items) with the stored documents' bytes as its
    items, served as the run made them."""
    marker = b'"items":[]'
    at = head.index(marker)
    return head[:at] + b'"items":[' + b",".join(items) + b"]" + head[at + len(marker) :]
