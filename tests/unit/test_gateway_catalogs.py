"""The gateway knows an instrument a configured catalog dir (``spine import``'s) holds, by the
layout a run reads, so validation and submit do not refuse it though no node lists it."""

from __future__ import annotations

from pathlib import Path

from spine.gateway.catalogs import held_in
from spine.gateway.config import load_config


def test_an_instrument_is_held_where_its_minute_or_daily_bars_are(tmp_path: Path) -> None:
    (tmp_path / "external" / "data" / "bar" / "AAPL.XNAS-1-DAY-LAST-EXTERNAL").mkdir(parents=True)
    (tmp_path / "internal" / "data" / "bar" / "X.SIM-1-MINUTE-LAST-INTERNAL").mkdir(parents=True)
    catalogs = [str(tmp_path / "nowhere"), str(tmp_path)]
    assert held_in(catalogs, "AAPL.XNAS") and held_in(catalogs, "X.SIM")
    assert not held_in(catalogs, "MSFT.XNAS") and not held_in([], "AAPL.XNAS")
    assert not held_in(catalogs, "../x/AAPL.XNAS")


def test_the_catalogs_key_is_read_from_the_environment() -> None:
    config = load_config(None, {"SPINE_GATEWAY_CATALOGS": "var/a,var/b"})
    assert config.catalogs == ["var/a", "var/b"]
    assert load_config(None, {}).catalogs == []
