"""The authoring half of the store on SQLite: saves, head conflicts (two threads racing
included), reads and refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import update

from jobs_helpers import STRATEGY, TOML, one_winner, race_saves, revision_document, rid, save, sha
from reference.wire_validator import validate
from spine.jobs import HeadMoved, NotFound, Store, StoreError
from spine.jobs.schema import meta


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path}/db/spine.db") as opened:
        yield opened


def test_a_first_save_creates_the_strategy_and_its_head(store: Store) -> None:
    first = save(store, None, "a", now=7)
    assert first.parent_revision_id is None and first.created_ts == 7
    assert first.files == (("strategy.toml", sha(TOML + "# a\n")),)
    validate(revision_document(first))
    strategy = store.strategy(STRATEGY)
    assert (strategy.head_revision_id, strategy.name, strategy.template_id) == (rid("a"), "EMA cross", "ema_cross")
    assert store.strategies() == [strategy]


def test_saves_on_the_head_chain_and_list_newest_first(store: Store) -> None:
    a = save(store, None, "a", now=1)
    b = save(store, a.revision_id, "b", {"strategy.toml": "x", "lib/extra.toml": "y"}, now=2)
    c = save(store, b.revision_id, "c", now=3)
    assert [r.revision_id for r in store.revisions(STRATEGY)] == [c.revision_id, b.revision_id, a.revision_id]
    assert [r.revision_id for r in store.revisions(STRATEGY, offset=1, limit=1)] == [b.revision_id]
    assert store.revision_files(STRATEGY, b.revision_id) == {"lib/extra.toml": sha("y"), "strategy.toml": sha("x")}
    assert store.revisions(STRATEGY)[1] == store.revision(STRATEGY, b.revision_id)
    strategy = store.strategy(STRATEGY)
    assert (strategy.head_revision_id, strategy.created_ts, strategy.updated_ts) == (c.revision_id, 1, 3)


def test_file_text_reads_exact_text_of_a_revision_or_the_head(store: Store) -> None:
    a = save(store, None, "a", {"strategy.toml": "ü\r\n\tend"})
    save(store, a.revision_id, "b", {"strategy.toml": "new"})
    old = store.file_text(STRATEGY, a.revision_id, "strategy.toml")
    assert (old.content, old.content_hash, old.revision_id) == ("ü\r\n\tend", sha("ü\r\n\tend"), a.revision_id)
    head = store.file_text(STRATEGY, None, "strategy.toml")
    assert (head.content, head.revision_id) == ("new", rid("b"))


def test_a_save_on_a_stale_parent_is_refused_naming_the_head_and_its_files(store: Store) -> None:
    a = save(store, None, "a")
    b = save(store, a.revision_id, "b", {"strategy.toml": "b", "more.toml": "m"})
    with pytest.raises(HeadMoved) as refused:
        save(store, a.revision_id, "c")
    assert refused.value.head_revision_id == b.revision_id
    assert refused.value.head_files == {"more.toml": sha("m"), "strategy.toml": sha("b")}
    assert store.strategy(STRATEGY).head_revision_id == b.revision_id
    assert len(store.revisions(STRATEGY)) == 2


def test_a_first_save_of_an_existing_strategy_and_a_parent_of_a_missing_one_are_refused(store: Store) -> None:
    a = save(store, None, "a")
    with pytest.raises(HeadMoved) as existing:
        save(store, None, "again")
    assert existing.value.head_revision_id == a.revision_id
    with pytest.raises(HeadMoved) as missing:
        save(store, a.revision_id, "x", strategy_id="other")
    assert (missing.value.head_revision_id, missing.value.head_files) == (None, {})


@pytest.mark.parametrize("first", [True, False], ids=["first-save", "on-a-head"])
def test_of_saves_racing_on_one_head_exactly_one_wins(tmp_path: Path, first: bool) -> None:
    url = f"sqlite:///{tmp_path}/spine.db"
    with Store(url) as setup:
        parent = None if first else save(setup, None, "base").revision_id
    outcomes = race_saves(url, parent)
    winner = one_winner(outcomes)
    with Store(url) as store:
        assert store.strategy(STRATEGY).head_revision_id == winner
        assert len(store.revisions(STRATEGY)) == (1 if first else 2)


def test_malformed_saves_are_refused_and_leave_nothing(store: Store) -> None:
    with pytest.raises(ValueError, match="at least one file"):
        store.save_revision(STRATEGY, None, "m", [], rid("a"), [], "n", None, 1)
    with pytest.raises(ValueError, match="each path once"):
        store.save_revision(
            STRATEGY, None, "m", [("a", "x", sha("x")), ("a", "x", sha("x"))], rid("a"), [], "n", None, 1
        )
    with pytest.raises(ValueError, match="not the SHA-256"):
        store.save_revision(STRATEGY, None, "m", [("a", "x", sha("y"))], rid("a"), [], "n", None, 1)
    assert store.strategies() == []


def test_missing_things_are_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.strategy("nope")
    with pytest.raises(NotFound):
        store.revisions("nope")
    with pytest.raises(NotFound):
        store.file_text("nope", None, "strategy.toml")
    a = save(store, None, "a")
    with pytest.raises(NotFound):
        store.revision(STRATEGY, rid("nope"))
    with pytest.raises(NotFound):
        store.file_text(STRATEGY, a.revision_id, "missing.toml")


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/spine.db"
    with Store(url) as store:
        with store._write() as connection:
            connection.execute(update(meta).where(meta.c.key == "schema_version").values(value=99))
    with pytest.raises(StoreError, match="schema version 99"):
        Store(url)
