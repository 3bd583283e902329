"""The durable catalog store: appends that never overlap, atomic files, retention on disk,
admission floors with counted refusals, the volume check, crash recovery and restart reload.
Read back through NautilusTrader's own ParquetDataCatalog."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import Price, Quantity
from nautilus_trader.persistence.catalog import ParquetDataCatalog

from spine.node.persist.store import AdmissionRefused, CatalogStore, Floors, VolumeNotReady, file_span

M = 60 * 10**9
T0 = 29_000_000 * M
BT = "BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"
OPEN = Floors(min_free_inodes=0, max_files=10**9, min_free_bytes=0)


def bar(k: int, bar_type: str = BT) -> Bar:
    price = Price.from_str(f"{100 + k % 7}.5")
    return Bar(
        BarType.from_str(bar_type), price, price, price, price, Quantity.from_str("1.000"), T0 + k * M, T0 + k * M
    )


def on_disk(root: Path, bar_type: str = BT) -> list[int]:
    return [b.ts_event for b in ParquetDataCatalog(str(root)).bars(bar_types=[bar_type])]


def files(root: Path) -> list[Path]:
    return sorted((root / "data").rglob("*.parquet")) if (root / "data").exists() else []


def test_flushes_append_one_file_each_and_read_back(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in range(1, 11):
        store.append(bar(k))
    store.flush()
    for k in range(11, 16):
        store.append(bar(k))
    store.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 16)]
    assert len(files(tmp_path)) == 2
    assert store.counters.bars_written == 15


def test_a_late_bar_never_reaches_the_catalog_as_an_overlap(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 4):
        store.append(bar(k))
    store.flush()
    store.append(bar(3))  # older than the last durable close
    store.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 4)]
    # The next rewrite (from the series, which holds it) makes it durable.
    store.rewrite(BT, [bar(k) for k in (1, 2, 3, 4)])
    assert on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 3, 4)]
    assert len(files(tmp_path)) == 1


def test_retention_holds_on_disk_and_a_rewrite_keeps_what_is_older_than_its_series(tmp_path: Path) -> None:
    """The files keep every bar back to the retention before the newest close, whatever the
    series (the newest 100 here) holds: a rewrite from the series replaces only the files
    reaching into its span, keeping the older part of the file that straddles its oldest bar,
    and files wholly older than the retention go."""
    store = CatalogStore(tmp_path, floors=OPEN, retention_ns=400 * M)
    series: list[Bar] = []
    for k in range(1, 1001):
        series = (series + [bar(k)])[-100:]
        store.append(bar(k))
        if k % 30 == 0:
            store.flush(lambda _: series)
            store.trim(lambda _: series[0].ts_init)
        if k % 170 == 0:
            store.consolidate(lambda _: series)
            assert len([p for p in files(tmp_path) if file_span(p)[1] >= series[0].ts_init]) == 1
    store.flush(lambda _: series)
    store.trim(lambda _: series[0].ts_init)
    held = on_disk(tmp_path)
    # Nothing lost inside the retention; nothing kept wholly outside it.
    assert held == [T0 + k * M for k in range(held[0] // M - T0 // M, 1001)], held[:3]
    assert 1000 - 400 - 30 <= (held[0] - T0) // M <= 1000 - 400
    assert store.counters.rewrites >= 5
    spans = sorted(file_span(p) for p in files(tmp_path))
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))  # disjoint


def test_the_retention_never_trims_a_bar_the_series_holds(tmp_path: Path) -> None:
    """A sparse series (an INTERNAL one of a quiet instrument) may reach back further than the
    retention: its files stay while it holds their bars."""
    store = CatalogStore(tmp_path, floors=OPEN, retention_ns=10 * M)
    for k in (1, 2, 50, 100):
        store.append(bar(k))
        store.flush()
    assert store.trim(lambda _: T0 + 2 * M) == 1 and on_disk(tmp_path) == [T0 + k * M for k in (2, 50, 100)]
    assert store.trim(lambda _: None) == 2 and on_disk(tmp_path) == [T0 + 100 * M]
    assert CatalogStore(tmp_path / "all", floors=OPEN).trim(lambda _: None) == 0  # no retention: no trim


def test_a_late_bar_rewrite_splits_the_straddling_file(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 3, 4, 5, 7):
        store.append(bar(k))
    store.flush()
    store.append(bar(6))  # late; the series holds 4..7 only
    store.flush(lambda _: [bar(k) for k in (4, 5, 6, 7)])
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 8)]
    assert sorted(file_span(p) for p in files(tmp_path)) == [(T0 + M, T0 + 3 * M), (T0 + 4 * M, T0 + 7 * M)]


def test_history_older_than_the_files_is_written_below_them(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (50, 51, 52):
        store.append(bar(k))
    store.flush()
    assert store.oldest_close(BT) == T0 + 50 * M
    assert store.write_older(BT, [bar(k) for k in (40, 41, 41, 49, 50, 51, 60)]) == 3  # at/after 50: held
    assert on_disk(tmp_path) == [T0 + k * M for k in (40, 41, 49, 50, 51, 52)]
    assert store.oldest_close(BT) == T0 + 40 * M and store.last_close(BT) == T0 + 52 * M
    assert [b.ts_event for b in store.load(BT, newest=2)] == [T0 + 51 * M, T0 + 52 * M]
    assert [b.ts_event for b in store.load(BT, newest=4)] == [T0 + k * M for k in (49, 50, 51, 52)]
    fresh = CatalogStore(tmp_path / "empty", floors=OPEN)
    assert fresh.oldest_close(BT) is None and fresh.load(BT, newest=5) == []


def test_a_flush_holding_a_late_bar_rewrites_from_the_series_it_took(tmp_path: Path) -> None:
    """A late bar (history older than what is durable, a late candle) is durable with the
    flush that took it: the bar type is rewritten from that flush's series, never appended as
    an overlap, so a crash after it loses neither the bar nor its number."""
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 4):
        store.append(bar(k))
    store.flush()
    store.append(bar(3))
    store.flush(lambda bar_type: [bar(k) for k in (1, 2, 3, 4)])
    assert on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 3, 4)]
    assert len(files(tmp_path)) == 1 and store.counters.rewrites == 1


@pytest.mark.parametrize("through_symlink", [False, True])
def test_a_relative_root_rewrites_like_an_absolute_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through_symlink: bool
) -> None:
    """The node's default data_dir is relative (var/spine); the catalog resolves its paths
    (symlinks too), so a rewrite must not compare its files with the root as given."""
    (tmp_path / "real").mkdir()
    cwd = tmp_path / "real"
    if through_symlink:
        (tmp_path / "link").symlink_to(cwd)
        cwd = tmp_path / "link"
    monkeypatch.chdir(cwd)
    store = CatalogStore(Path("var/spine/catalog/external"), floors=OPEN)
    for k in (1, 2, 4):
        store.append(bar(k))
    store.flush()
    store.rewrite(BT, [bar(k) for k in (1, 2, 3, 4)])
    root = tmp_path / "real" / "var/spine/catalog/external"
    assert on_disk(root) == [T0 + k * M for k in (1, 2, 3, 4)]
    assert len(files(root)) == 1
    assert not any((root / ".trash").iterdir())


@pytest.mark.parametrize(
    ("floors", "reason"),
    [
        (Floors(min_free_inodes=2**62, max_files=10**9, min_free_bytes=0), "min_free_inodes"),
        (Floors(min_free_inodes=0, max_files=0, min_free_bytes=0), "max_files"),
        (Floors(min_free_inodes=0, max_files=10**9, min_free_bytes=2**62), "min_free_bytes"),
    ],
)
def test_a_refused_write_is_counted_and_leaves_no_file_and_no_lost_bar(
    tmp_path: Path, floors: Floors, reason: str
) -> None:
    store = CatalogStore(tmp_path, floors=floors)
    store.append(bar(1))
    with pytest.raises(AdmissionRefused) as refused:
        store.flush()
    assert refused.value.reason == reason and store.counters.refused == {reason: 1}
    assert files(tmp_path) == [] and not any((tmp_path / ".staging").glob("*"))
    store.floors = OPEN  # the floor clears: the pending bar goes out with the next flush
    store.flush()
    assert on_disk(tmp_path) == [T0 + M]


@pytest.mark.parametrize("fails_at", [1, 2, 3])
def test_a_rewrite_that_fails_puts_the_old_files_back_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails_at: int
) -> None:
    """A rewrite placing two files (the older part of a straddling file, the series) that
    fails at its n-th rename into place (the first moves an old file out) leaves the files
    as they were."""
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 3, 4, 6):
        store.append(bar(k))
    store.flush()
    before = files(tmp_path)
    renames = {"n": 0}
    real = os.replace

    def disk_full(source: object, target: object) -> None:
        renames["n"] += 1
        if renames["n"] == fails_at:
            raise OSError(28, "No space left on device")
        real(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError):
        store.rewrite(BT, [bar(k) for k in (3, 4, 5, 6)])
    monkeypatch.undo()
    assert files(tmp_path) == before and on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 3, 4, 6)]
    assert not any((tmp_path / ".trash").iterdir())
    store.rewrite(BT, [bar(k) for k in (3, 4, 5, 6)])  # the disk clears: the next one goes through
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 7)]


def _cut_short(root: Path) -> tuple[Path, Path]:
    """Five bars in one file, then a rewrite cut short after moving that file to its trash
    batch: the old file's place and the batch."""
    store = CatalogStore(root, floors=OPEN)
    for k in range(1, 6):
        store.append(bar(k))
    store.flush()
    (old,) = files(root)
    batch = root / ".trash" / "cut"
    moved = batch / old.relative_to(root)
    moved.parent.mkdir(parents=True)
    os.replace(old, moved)
    return old, batch


def test_a_rewrite_cut_short_after_placing_part_is_rolled_back_at_start(tmp_path: Path) -> None:
    old, batch = _cut_short(tmp_path)
    # The process died after placing one of the two new files it listed.
    placed = old.parent / "2024-01-01T00-01-00-000000000Z_2024-01-01T00-02-00-000000000Z.parquet"
    placed.write_bytes(b"partial")
    (batch / "placing").write_text(f"{placed.relative_to(tmp_path)}\n{old.parent.relative_to(tmp_path)}/b.parquet\n")
    CatalogStore(tmp_path, floors=OPEN)
    assert files(tmp_path) == [old] and on_disk(tmp_path) == [T0 + k * M for k in range(1, 6)]
    assert not batch.exists()


def test_the_node_refuses_a_volume_that_is_not_writable_or_not_mounted(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(VolumeNotReady, match="not writable"):
        CatalogStore(blocker / "catalog")
    with pytest.raises(VolumeNotReady, match="not mounted"):
        CatalogStore(tmp_path / "catalog", expect_mount=tmp_path)


def test_a_rewrite_cut_short_is_rolled_back_at_start(tmp_path: Path) -> None:
    _, batch = _cut_short(tmp_path)  # the process died after trashing, before placing the new file
    CatalogStore(tmp_path, floors=OPEN)
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 6)]
    assert not batch.exists()


def test_a_restarted_store_reloads_and_resumes_after_its_last_close(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in range(1, 4):
        store.append(bar(k))
    store.flush()
    again = CatalogStore(tmp_path, floors=OPEN)
    assert [b.ts_event for b in again.load(BT)] == [T0 + k * M for k in range(1, 4)]
    assert again.last_close(BT) == T0 + 3 * M
    again.append(bar(3))
    again.append(bar(4))
    again.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 5)]


def test_consolidation_merges_each_bar_type_into_one_file_with_its_late_bars(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    series = [bar(k) for k in range(1, 10)]
    for chunk in ([1, 2], [4, 5], [7, 8, 9]):
        for k in chunk:
            store.append(bar(k))
        store.flush()
    assert len(files(tmp_path)) == 3
    assert store.consolidate(lambda _: series) == 1
    assert len(files(tmp_path)) == 1
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 10)]


def test_a_minute_delivered_twice_is_stored_once(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 2, 3, 1):
        store.append(bar(k))
    store.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 3)]


def test_bars_appended_while_a_flush_writes_off_the_loop_are_kept_for_the_next(tmp_path: Path) -> None:
    import threading

    store = CatalogStore(tmp_path, floors=OPEN)
    for k in range(1, 201):
        store.append(bar(k))
    writer = threading.Thread(target=store.flush)
    writer.start()
    for k in range(201, 401):  # the loop keeps appending meanwhile
        store.append(bar(k))
    writer.join()
    store.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 401)]


def test_a_refused_flush_puts_its_bars_back_before_newer_ones(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=Floors(min_free_inodes=0, max_files=0, min_free_bytes=0))
    for k in range(1, 4):
        store.append(bar(k))
    with pytest.raises(AdmissionRefused):
        store.flush()
    store.append(bar(4))
    store.floors = OPEN
    store.flush()
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 5)]
