"""The Python client: the tool table's typed methods over one gateway, each returning the
decoded document, plus what a notebook does in a loop (every page of a route, a backtest
followed to its end, a strategy saved from a directory of files)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from spine._core import WIRE_VERSION
from spine.client.errors import ContractViolation, GatewayError
from spine.client.methods import Methods
from spine.client.table import Tool, tool
from spine.client.transport import DEFAULT_GATEWAY, Answer, Batch, Event, Gateway
from spine.wire import decoder as wire

__all__ = ["TERMINAL_STATES", "Client", "decode", "strategy_files"]

#: A backtest job's states that end it.
TERMINAL_STATES = frozenset({"COMPLETED", "FAILED", "CANCELLED"})


def decode(answer: Answer, found: Tool) -> Any:
    """The answer's document, checked by the client-side decoder against the document the
    route serves; :class:`GatewayError` for an error answer (a 409's conflict document is
    checked too) and :class:`ContractViolation` for an answer that breaks the contract."""
    if answer.ok:
        if found.document is None:  # a schema file or the OpenAPI document: no wire tags
            return json.loads(answer.body)
        return wire.decode(answer.body, found.document)
    if answer.status == 409 and found.conflict is not None and b'"schema_id"' in answer.body:
        conflict = wire.decode(answer.body, found.conflict)
        raise GatewayError(409, answer.body, None, f"{found.conflict}: {conflict['detail']}")
    try:
        error = wire.decode_error_body(answer.body)["error"]
    except ContractViolation as violation:  # e.g. a proxy's page: the status still says what happened
        raise GatewayError(answer.status, answer.body, None, f"no error envelope ({violation.reason})") from None
    detail = error["detail"]
    raise GatewayError(answer.status, answer.body, error["code"], detail, symbol=detail.split(":", 1)[0])


def strategy_files(directory: str | Path) -> list[dict[str, str]]:
    """A strategy project's files from a directory: every file under it (hidden ones and
    caches left out), by its relative POSIX path, as UTF-8 text."""
    root = Path(directory)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a directory")
    files = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
            files.append({"path": relative.as_posix(), "content": path.read_text(encoding="utf-8")})
    return files


class Client(Methods):
    """The gateway at ``gateway`` (default ``http://127.0.0.1:8800``, ``spine up``'s)."""

    def __init__(self, gateway: str = DEFAULT_GATEWAY, *, timeout: float = 30.0) -> None:
        self.gateway = Gateway(gateway, timeout)

    def close(self) -> None:
        self.gateway.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def answer(self, tool_name: str, /, **arguments: Any) -> Answer:
        """A query or command tool's answer as it came (status and bytes)."""
        return self.gateway.call(tool(tool_name), _given(arguments))

    def call(self, tool_name: str, /, **arguments: Any) -> Any:
        return decode(self.answer(tool_name, **arguments), tool(tool_name))

    def events(self, tool_name: str, /, **arguments: Any) -> list[Event]:
        got = self.gateway.batch(tool(tool_name), _given(arguments))
        if isinstance(got, Answer):
            decode(got, tool(tool_name))  # raises: a stream answers 200 or an error
        assert isinstance(got, Batch)
        return list(got.events)

    def pages(self, tool_name: str, /, *, most: int = 1_000, **arguments: Any) -> Iterator[Any]:
        """Every page of a paged tool, following ``next_cursor`` (at most ``most`` pages)."""
        for _ in range(most):
            page = self.call(tool_name, **arguments)
            yield page
            if not page.get("next_cursor"):
                return
            arguments["cursor"] = page["next_cursor"]

    def save_strategy(self, strategy_id: str, directory: str | Path, *, message: str = "") -> Any:
        """Save a directory's files as the next revision of ``strategy_id`` (the first when it
        has none); the saved ``svc.strategy_revision``."""
        try:
            parent = self.strategies_get(strategy_id)["head_revision_id"]
        except GatewayError as error:
            if error.status != 404:
                raise
            parent = None
        body = {
            "version": WIRE_VERSION,
            "schema_id": "svc.strategy_revision_save_request",
            "schema_version": 2,
            "strategy_id": strategy_id,
            "parent_revision_id": parent,
            "message": message,
            "files": strategy_files(directory),
        }
        return self.strategies_create(body=body)

    def follow_backtest(self, job_id: str, *, seconds: float = 600.0) -> Iterator[dict[str, Any]]:
        """A backtest job's events, from its first, until a STATE event ends it (TimeoutError
        after ``seconds``)."""
        deadline, after = time.monotonic() + seconds, "0"
        while time.monotonic() < deadline:
            wait = max(1, min(60, int(deadline - time.monotonic())))
            for event in self.stream_backtests(job_id=job_id, after_sequence=after, max_events=1_000, seconds=wait):
                document = json.loads(event.data)
                after = document["sequence"]
                yield document
                if document["type"] == "STATE" and document["state"] in TERMINAL_STATES:
                    return
        raise TimeoutError(f"backtest {job_id} did not end within {seconds:g} s")


def _given(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a caller gave (a method passes every one, None when not given)."""
    return {name: value for name, value in arguments.items() if value is not None}
