"""The retained-ingestion manifest file: reading it, and the atomic rewrite that the selection
routes make (sorted ids under the header, permissions kept, the old file intact on failure)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from spine.manifest import HEADER, load_manifest, write_manifest
from spine.node.service import load_manifest as runner_load_manifest


def test_load_reads_ids_and_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "retained.txt"
    path.write_text("# mine\nBTCUSDT.SIM\n\n  ETHUSDT.SIM  \n   # indented comment\n")
    assert load_manifest(str(path)) == {"BTCUSDT.SIM", "ETHUSDT.SIM"}
    assert load_manifest(None) is None
    assert runner_load_manifest is load_manifest  # the runner's name still works


def test_write_sorts_dedupes_and_keeps_a_header(tmp_path: Path) -> None:
    path = tmp_path / "retained.txt"
    path.write_text("# an operator's note\nZ.SIM\n")
    write_manifest(str(path), ["SOLUSDT.SIM", "BTCUSDT.SIM", "SOLUSDT.SIM"])
    assert path.read_text() == HEADER + "BTCUSDT.SIM\nSOLUSDT.SIM\n"
    assert HEADER.startswith("#") and all(line.startswith("#") for line in HEADER.splitlines())
    assert load_manifest(str(path)) == {"BTCUSDT.SIM", "SOLUSDT.SIM"}
    write_manifest(str(path), [])
    assert load_manifest(str(path)) == frozenset()


def test_write_keeps_the_permissions_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "retained.txt"
    path.write_text("A.SIM\n")
    os.chmod(path, 0o640)
    write_manifest(str(path), ["B.SIM"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["retained.txt"]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "retained.txt"
    path.write_text("A.SIM\n")

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_manifest(str(path), ["B.SIM"])
    assert path.read_text() == "A.SIM\n"
    assert [p.name for p in tmp_path.iterdir()] == ["retained.txt"]
