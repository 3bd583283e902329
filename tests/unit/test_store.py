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

from spine.node.persist.store import AdmissionRefused, CatalogStore, Floors, VolumeNotReady

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


def test_retention_holds_on_disk(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN, capacity=100, slack=10)
    series: list[Bar] = []
    for k in range(1, 301):
        series = (series + [bar(k)])[-100:]
        store.append(bar(k))
        if k % 30 == 0:
            store.flush(lambda _: series)
            assert len(on_disk(tmp_path)) <= 100
    store.flush(lambda _: series)
    held = on_disk(tmp_path)
    assert len(held) <= 100 and held[-1] == T0 + 300 * M
    assert held == sorted(held) and store.counters.rewrites >= 2


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


def test_a_rewrite_whose_new_file_fails_puts_the_old_files_back_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in (1, 2, 4):
        store.append(bar(k))
    store.flush()
    before = files(tmp_path)

    def disk_full(data: list[Bar]) -> list[Path]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_staged", disk_full)
    with pytest.raises(OSError):
        store.rewrite(BT, [bar(k) for k in (1, 2, 3, 4)])
    assert files(tmp_path) == before and on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 4)]
    assert not any((tmp_path / ".trash").iterdir())
    monkeypatch.undo()  # the disk clears: the next rewrite goes through
    store.rewrite(BT, [bar(k) for k in (1, 2, 3, 4)])
    assert on_disk(tmp_path) == [T0 + k * M for k in (1, 2, 3, 4)]


def test_the_node_refuses_a_volume_that_is_not_writable_or_not_mounted(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(VolumeNotReady, match="not writable"):
        CatalogStore(blocker / "catalog")
    with pytest.raises(VolumeNotReady, match="not mounted"):
        CatalogStore(tmp_path / "catalog", expect_mount=tmp_path)


def test_a_rewrite_cut_short_is_rolled_back_at_start(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path, floors=OPEN)
    for k in range(1, 6):
        store.append(bar(k))
    store.flush()
    (old,) = files(tmp_path)
    trashed = tmp_path / ".trash" / "cut" / old.relative_to(tmp_path)
    trashed.parent.mkdir(parents=True)
    os.replace(old, trashed)  # the process died after trashing, before placing the new file
    CatalogStore(tmp_path, floors=OPEN)
    assert on_disk(tmp_path) == [T0 + k * M for k in range(1, 6)]
    assert not (tmp_path / ".trash" / "cut").exists()


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
