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
from typing import Any, cast

import msgspec

from spine._core import canonical_json, identity
from spine.gateway.job_streams import JobStreams, Waiter
from spine.gateway.pages import db_page, page_document
from spine.gateway.runnable import Run, RunChecks
from spine.http.app import Relayed
from spine.http.bodies import BacktestBody
from spine.http.errors import HttpError
from spine.http.request import I63, Query
from spine.http.times import TIME_WORDS, time_nanos
from spine.http.streams import SSE, heartbeat
from spine.http.v1 import V1_VERSION
from spine.jobs import documents
from spine.jobs.records import JOB_STATES, AlreadyFinished, JobState, NotFound
from spine.jobs.store import Store
from spine.reasons import scrub
from spine.gateway.strategies import IDENTITY
from spine.strategies import document
from spine.strategies.errors import ParameterOverrideError, StrategyDocumentError
from spine.wire.instruments import catalog_id_problem

__all__ = ["BacktestHandlers", "OUTPUT_PARTS", "execution_config"]

_encode = msgspec.json.Encoder().encode
#: The parts of a finished run ``/v2/backtests/{id}/outputs/{part}`` serves, as stored.
OUTPUT_PARTS = ("statistics", "equity", "orders", "fills", "positions", "signals", "markers", "retirements",
                "engine_status")
#: The v1 record kinds and the output part that holds them.
_V1_PARTS = {"signals": "signals", "chart_markers": "markers", "retirements": "retirements"}
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED")
#: How often the live job streams' one poller looks at their jobs (:mod:`spine.gateway.job_streams`).
POLL_SECS = 0.1


def execution_config(capital: str, seed: int) -> dict[str, Any]:
    """The execution block the service fixes, less the currency (the instruments' quote
    currency, known once the run reads them)."""
    return {"capital": capital, "fee_model": "MAKER_TAKER", "fill_model": "FILL_MODEL", "seed": seed}


class BacktestHandlers:
    def __init__(self, store: Store, gateway_id: str, execution: dict[str, Any], heartbeat_secs: float,
                 relay_engine_status: Callable[[Query, dict[str, str]], Awaitable[Relayed]],
                 instrument_check: Callable[[str], bool] | None = None, run_checks: RunChecks | None = None,
                 job_stream_subscribers: int = 1_024) -> None:
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

    # --- submit ------------------------------------------------------------------------------

    async def backtests_submit(self, query: Query, params: dict[str, str], body: BacktestBody) -> Relayed:
        now = time.time_ns()
        start, end = _span(body, now)
        if body.instrument_id is not None and (problem := catalog_id_problem(body.instrument_id)) is not None:
            raise HttpError("INVALID_INSTRUMENT_ID", f"POST /v2/backtests: instrument_id: {problem}")
        values = _texts(body.parameters)
        revision_id, plan = await self._plan(body, values)
        resolution, channel = body.resolution or plan.resolution, body.channel or plan.channel
        if self.run_checks is not None:
            instruments = [body.instrument_id] if body.instrument_id is not None else list(plan.instruments)
            await self.run_checks.check(Run(instruments, resolution, channel, start, end, plan.quantity))
        spec = {"strategy_id": body.strategy_id, "revision_id": revision_id, "instrument_id": body.instrument_id,
                "start": str(start), "end": str(end), "resolution": resolution,
                "channel": channel, "values": plan.values}
        config_hash = identity("config_hash", {"run": spec, "execution": self.execution})
        job_id = identity("job_id", {"config_hash": config_hash, "submitted_ts": str(now),
                                     "gateway_id": self.gateway_id})
        # Sealed as given, times as nanoseconds and parameters as exact text: one request
        # however it was spelt (docs/contract.md, Strategies and backtests).
        given = {key: value for key, value in msgspec.structs.asdict(body).items() if value is not None}
        sealed = given | {key: str(value) for key, value in (("start", start), ("end", end)) if key in given}
        if values is not None:
            sealed["parameters"] = values
        request = canonical_json({"body": sealed, "spec": spec, "config_hash": config_hash,
                                  "execution": self.execution}).decode()
        job = await asyncio.to_thread(self.store.submit, job_id=job_id, strategy_id=body.strategy_id,
                                      revision_id=revision_id, request=request, instrument_id=body.instrument_id,
                                      start=start, end=end, now=now)
        return Relayed(202, _encode(documents.receipt(job, config_hash)))

    async def _plan(self, body: BacktestBody, values: dict[str, str] | None) -> tuple[str, Any]:
        """The revision to run and its plan at ``values``; 404 for a strategy or revision that
        does not exist, 400 for a revision whose validation has errors or values it refuses."""
        try:
            strategy = await asyncio.to_thread(self.store.strategy, body.strategy_id)
        except NotFound:
            raise HttpError("NOT_FOUND", f"POST /v2/backtests: no strategy {body.strategy_id!r}") from None
        revision_id = body.revision_id or strategy.head_revision_id
        try:
            files = await asyncio.to_thread(self.store.revision_texts, body.strategy_id, revision_id)
        except NotFound:
            raise HttpError("NOT_FOUND", f"POST /v2/backtests: strategy {body.strategy_id!r} has no revision "
                                         f"{revision_id}") from None
        cannot = (f"POST /v2/backtests: revision {revision_id} cannot run (GET /v2/strategies/{body.strategy_id}/"
                  "validate names every problem)")
        found = await asyncio.to_thread(document.validate, files, self.instrument_check)
        errors = [d for d in found if d.severity == "ERROR"]
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise HttpError("INVALID_BODY", f"{cannot}: {errors[0].describe()}{more}")
        try:
            return revision_id, document.plan(files, values or {})
        except ParameterOverrideError as error:
            raise HttpError("INVALID_BODY", f"POST /v2/backtests: parameters: {error}") from None
        except StrategyDocumentError as error:
            raise HttpError("INVALID_BODY", f"{cannot}: {error}") from None

    # --- jobs --------------------------------------------------------------------------------

    async def backtests_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        state = cast(JobState | None, query.choice("state", JOB_STATES))
        strategy_id = query.text("strategy_id")
        route = f"/v2/backtests?{strategy_id}&{state}"
        rows, cursor = await db_page(query, route, lambda offset, limit: self.store.jobs(
            offset, limit, strategy_id=strategy_id, state=state))
        return page_document("svc.backtest_job_page", [documents.summary(row) for row in rows], cursor, 2,
                             runs={row.job_id: documents.run(row) for row in rows})

    async def backtests_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return documents.detail(await self._job(params["id"]))

    async def backtests_request(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return documents.request(await self._job(params["id"]))

    async def backtests_cancel(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        job = await self._job(params["id"])
        try:
            await asyncio.to_thread(self.store.request_cancel, job.job_id, time.time_ns())
        except AlreadyFinished as finished:
            raise HttpError("CONFLICT", f"job {job.job_id} is {finished.state}; only a QUEUED or RUNNING job can be "
                                        "cancelled") from None
        self.watch.notify(job.job_id)
        return documents.detail(await self._job(job.job_id))

    async def backtests_report(self, query: Query, params: dict[str, str]) -> bytes:
        job = await self._finished(params["id"], "report")
        rows = await asyncio.to_thread(self.store.outputs, job.job_id, "report", 0, 1)
        return rows[0]

    async def backtests_outputs(self, query: Query, params: dict[str, str]) -> bytes:
        part = params["part"]
        if part not in OUTPUT_PARTS:
            raise HttpError("NOT_FOUND", f"no output {part!r}; outputs: {', '.join(OUTPUT_PARTS)}")
        job = await self._finished(params["id"], part)
        rows, cursor = await db_page(query, f"/v2/backtests/{job.job_id}/outputs/{part}",
                                     lambda offset, limit: self.store.outputs(job.job_id, part, offset, limit))
        head = _encode(page_document("svc.backtest_output_page", [], cursor, job_id=job.job_id, run_id=job.run_id,
                                     part=part))
        return _splice_items(head, rows)

    async def backtests_events(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        job = await self._job(params["id"])
        after = query.sequence("after_sequence", I63) or 0
        rows, cursor = await db_page(query, f"/v2/backtests/{job.job_id}/events?{after}",
                                     lambda offset, limit: self.store.events(job.job_id, after + offset, limit))
        return page_document("svc.backtest_event_page", [documents.event(row) for row in rows], cursor,
                             job_id=job.job_id)

    # --- the live job stream -----------------------------------------------------------------

    async def stream(self, query: Query, proto: Any) -> None:
        """The job's events above ``after_sequence`` in order, then live, one ``state`` or
        ``log`` event each (``id:`` its sequence), heartbeats between; the stream ends after
        the job's final state, at once when the job had already ended. It reads the database
        only when :class:`JobStreams` says the job moved."""
        job_id = query.text("job_id")
        if job_id is None:
            raise HttpError("INVALID_PARAMETER", "GET /v2/stream/backtests needs job_id (a job's id, from "
                                                 "POST /v2/backtests or GET /v2/backtests)")
        job = await self._job(job_id)
        after = query.sequence("after_sequence", I63) or 0
        if self.watch.full():
            raise HttpError("SUBSCRIBERS_FULL", f"the job streams have their {self.watch.limit} subscribers; "
                                                "retry later")
        with self.watch.watching(job.job_id) as waiter:
            waiter.state = job.state
            transport = proto.response_stream(200, SSE)
            disconnected = asyncio.ensure_future(proto.client_disconnect())
            try:
                await self._follow(job.job_id, after, waiter, transport, disconnected)
            finally:
                disconnected.cancel()

    async def _follow(self, job_id: str, after: int, waiter: Waiter, transport: Any,
                      disconnected: asyncio.Future[Any]) -> None:
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
                await asyncio.wait((disconnected,), timeout=min(self.watch.poll_secs,
                                                                max(0.0, self.heartbeat_secs - quiet)))
            look = len(rows) == 500 or waiter.moved

    # --- v1 records --------------------------------------------------------------------------

    async def _records(self, kind: str, query: Query) -> dict[str, Any]:
        job_id = query.text("job_id")
        if job_id is not None:
            await self._job(job_id)
        part = _V1_PARTS[kind]
        rows, cursor = await db_page(query, f"/{kind}?{job_id}", lambda offset, limit: self.store.records(
            part, offset, limit, job_id=job_id))
        return {"version": V1_VERSION, "schema_id": "v1.records", "schema_version": 1, "kind": kind,
                "items": [msgspec.json.decode(row) for row in rows], "next_cursor": cursor}

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
        rows = await asyncio.to_thread(self.store.last_output, job.job_id, "engine_status")
        status = None if rows is None else msgspec.json.decode(rows)
        if isinstance(status, dict) and isinstance(status.get("last_error"), str):
            status["last_error"] = scrub(status["last_error"])  # a run's before public reasons
        return {"version": V1_VERSION, "schema_id": "v1.engine_status", "schema_version": 1,
                "engine_status": status}

    # --- lookups -----------------------------------------------------------------------------

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
            raise HttpError("CONFLICT", f"job {job.job_id} is {job.state}: its {what} exists once it is COMPLETED"
                            + (f" (last error: {scrub(job.last_error)})" if job.last_error else ""))
        return job


def _span(body: BacktestBody, now: int) -> tuple[int, int]:
    """The span of bar closes a run takes, both ends inclusive: from the first bar held (0)
    to the submission when the body leaves them out; each given as nanoseconds or an ISO-8601
    UTC time (``spine.http.times``)."""
    given: dict[str, int] = {}
    for name, text in (("start", body.start), ("end", body.end)):
        if text is None:
            continue
        value = time_nanos(text)
        if value is None:
            raise HttpError("INVALID_BODY", f"POST /v2/backtests: {name} {text!r} is not a time; give {TIME_WORDS}")
        if value > 2**63 - 1:
            raise HttpError("INVALID_BODY", f"POST /v2/backtests: {name} {text} is past 2^63-1 ns (year 2262)")
        given[name] = value
    start, end = given.get("start", 0), given.get("end", now)
    if end < start:
        raise HttpError("INVALID_BODY", f"POST /v2/backtests: end {end} precedes start {start}; give start <= end "
                                        "(both inclusive)")
    return start, end


def _texts(parameters: dict[str, str | int] | None) -> dict[str, str] | None:
    """Parameter values as exact text (a JSON integer is exact: ``12`` is ``"12"``)."""
    return None if parameters is None else {name: str(value) for name, value in parameters.items()}


def _frame(event: dict[str, Any]) -> bytes:
    name = "state" if event["type"] == "STATE" else "log"
    return b"event: " + name.encode() + b"\nid: " + str(event["sequence"]).encode() + b"\ndata: " + \
        _encode(event) + b"\n\n"


def _splice_items(head: bytes, items: list[bytes]) -> bytes:
    """The page ``head`` (encoded with no items) with the stored documents' bytes as its
    items, served as the run made them."""
    marker = b'"items":[]'
    at = head.index(marker)
    return head[:at] + b'"items":[' + b",".join(items) + b"]" + head[at + len(marker):]
