"""The tables of the strategy and job store (SQLAlchemy Core), written once for SQLite and
PostgreSQL. Timestamps are integer nanoseconds since the epoch in BigInteger columns (signed
64 bit: good until 2262). JSON travels as text exactly as the caller gave it; file contents
and run outputs as bytes."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

__all__ = [
    "SCHEMA_VERSION",
    "metadata",
    "meta",
    "strategies",
    "revisions",
    "revision_files",
    "blobs",
    "jobs",
    "job_events",
    "job_outputs",
    "workers",
    "studies",
]

#: Bumped whenever a table changes; a store refuses a database written at another version. A
#: new table is additive (``create_all`` adds it to a database of this version).
SCHEMA_VERSION = 1

#: Identities are 64 hex digits; ids and names stay well inside these widths.
_ID = 64
_NAME = 256

metadata = MetaData()

#: Key-value rows: ``schema_version`` and the counters (``job_seq``) that order lists.
meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

strategies = Table(
    "strategies",
    metadata,
    Column("strategy_id", String(_ID), primary_key=True),
    Column("name", String(_NAME), nullable=False),
    Column("template_id", String(_ID)),
    Column("head_revision_id", String(_ID), nullable=False),
    Column("created_ts", BigInteger, nullable=False),
    Column("updated_ts", BigInteger, nullable=False),
)

revisions = Table(
    "revisions",
    metadata,
    Column("strategy_id", String(_ID), ForeignKey("strategies.strategy_id"), nullable=False),
    Column("revision_id", String(_ID), nullable=False),
    Column("parent_revision_id", String(_ID)),
    Column("message", Text, nullable=False),
    #: JSON text: the list of instrument ids the revision names.
    Column("instruments", Text, nullable=False),
    Column("created_ts", BigInteger, nullable=False),
    #: 1, 2, ... per strategy, in save order (lists are newest first).
    Column("seq", BigInteger, nullable=False),
    PrimaryKeyConstraint("strategy_id", "revision_id"),
    Index("revisions_by_seq", "strategy_id", "seq", unique=True),
)

revision_files = Table(
    "revision_files",
    metadata,
    Column("strategy_id", String(_ID), nullable=False),
    Column("revision_id", String(_ID), nullable=False),
    Column("path", String(_NAME), nullable=False),
    Column("content_hash", String(_ID), ForeignKey("blobs.content_hash"), nullable=False),
    PrimaryKeyConstraint("strategy_id", "revision_id", "path"),
)

#: File contents, shared by every revision (and strategy) holding the same bytes.
blobs = Table(
    "blobs",
    metadata,
    Column("content_hash", String(_ID), primary_key=True),
    Column("content", LargeBinary, nullable=False),
)

jobs = Table(
    "jobs",
    metadata,
    Column("job_id", String(_ID), primary_key=True),
    Column("strategy_id", String(_ID), nullable=False),
    Column("revision_id", String(_ID), nullable=False),
    #: The request (:class:`spine.jobs.request.BacktestRequest`) as canonical JSON text.
    Column("request", Text, nullable=False),
    Column("instrument_id", String(_NAME)),
    Column("start", BigInteger, nullable=False),
    Column("end", BigInteger, nullable=False),
    Column("state", String(16), nullable=False),
    Column("submitted_ts", BigInteger, nullable=False),
    Column("started_ts", BigInteger),
    Column("finished_ts", BigInteger),
    #: JSON text of the execution block, once the run has started.
    Column("execution", Text),
    Column("run_id", String(_ID)),
    Column("last_error", Text),
    #: The worker holding a RUNNING job, and when it last said so.
    Column("worker_id", String(_NAME)),
    Column("heartbeat_ts", BigInteger),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    #: Claims so far (a reaped job counts its lost attempt).
    Column("attempts", Integer, nullable=False, default=0),
    #: The last event sequence given out: the next event takes this plus one, under the row's lock.
    Column("last_sequence", BigInteger, nullable=False, default=0),
    #: Submission order (``meta.job_seq``); lists are newest first, claims oldest first.
    Column("seq", BigInteger, nullable=False, unique=True),
    Index("jobs_by_state", "state", "seq"),
)

job_events = Table(
    "job_events",
    metadata,
    Column("job_id", String(_ID), ForeignKey("jobs.job_id"), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("type", String(8), nullable=False),
    Column("state", String(16)),
    Column("level", String(8)),
    Column("message", Text),
    Column("ts_event", BigInteger, nullable=False),
    PrimaryKeyConstraint("job_id", "sequence"),
)

#: A finished run's documents, each canonical JSON bytes, in order within a part.
job_outputs = Table(
    "job_outputs",
    metadata,
    Column("job_id", String(_ID), ForeignKey("jobs.job_id"), nullable=False),
    Column("part", String(32), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("body", LargeBinary, nullable=False),
    PrimaryKeyConstraint("job_id", "part", "seq"),
)

#: Every running worker says it is alive here (its own thread, every heartbeat); a stopping
#: worker removes its row. Read by the gateway's health and status.
workers = Table(
    "workers",
    metadata,
    Column("worker_id", String(_NAME), primary_key=True),
    Column("started_ts", BigInteger, nullable=False),
    Column("seen_ts", BigInteger, nullable=False),
)

#: Parameter studies: what each searches and scores (its trials are Optuna's, in Optuna's
#: storage), its state, the progress its scheduler last wrote, and which gateway's scheduler
#: drives it (``owner``, until ``lease_ts`` goes stale).
studies = Table(
    # Not "studies": Optuna's RDB storage names its own tables so, in the same database.
    "parameter_studies",
    metadata,
    Column("study_id", String(_ID), primary_key=True),
    Column("strategy_id", String(_ID), nullable=False),
    Column("revision_id", String(_ID), nullable=False),
    #: The definition as accepted (:class:`spine.studies.definition.Definition`), canonical JSON text.
    Column("definition", Text, nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_ts", BigInteger, nullable=False),
    Column("updated_ts", BigInteger, nullable=False),
    Column("last_error", Text),
    #: Trials created (retried failures not counted), and by state.
    Column("trials", Integer, nullable=False, default=0),
    Column("complete", Integer, nullable=False, default=0),
    Column("running", Integer, nullable=False, default=0),
    Column("waiting", Integer, nullable=False, default=0),
    Column("failed", Integer, nullable=False, default=0),
    Column("best_trial", Integer),
    #: The best trial's objective, exact decimal text.
    Column("best_value", Text),
    Column("owner", String(_NAME)),
    Column("lease_ts", BigInteger),
    #: The holdout run of the best trial: which trial, and its job.
    Column("holdout_trial", Integer),
    Column("holdout_job_id", String(_ID)),
    Index("parameter_studies_by_created", "created_ts", "study_id"),
)
