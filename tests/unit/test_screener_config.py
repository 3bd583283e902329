"""Screener configuration: defaults that follow the default local node, the file, then
SPINE_SCREENER_* variables over it; every bad value refused naming the key and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from spine.screener.config import ConfigError, load_config


def test_the_defaults_follow_the_default_local_node() -> None:
    config = load_config(None, {})
    assert config.nodes == ["http://127.0.0.1:8700"] and config.channel is None
    assert (config.host, config.port, config.mode) == ("127.0.0.1", 8710, "public-readonly")


def test_the_environment_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "screener.toml"
    path.write_text('nodes = ["http://10.0.0.1:8700"]\nport = 9000\nchannel = "INTERNAL"\n')
    assert load_config(str(path), {}).nodes == ["http://10.0.0.1:8700"]
    config = load_config(str(path), {"SPINE_SCREENER_NODES": "http://a:1, https://b:2/", "SPINE_SCREENER_PORT": "9100"})
    assert (config.nodes, config.port, config.channel) == (["http://a:1", "https://b:2/"], 9100, "INTERNAL")
    assert load_config(None, {"SPINE_SCREENER_CONFIG": str(path)}).port == 9000


@pytest.mark.parametrize(
    ("toml", "refusal"),
    [
        ("nodes = []", r"nodes: 0 given; allowed 1..64 base URLs"),
        ('nodes = ["127.0.0.1:8700"]', r"nodes: '127.0.0.1:8700' is not a node base URL; allowed: http\(s\)://host"),
        ('nodes = ["http://h:1/v2"]', r"not a node base URL"),
        ('nodes = ["http://h:1?x=1"]', r"not a node base URL"),
        ('nodes = ["http://h:1", "http://h:1"]', r"repeats a base URL; each node is listed once"),
        ("port = 0", r"port 0: allowed 1..65535"),
        ("warm_concurrency = 0", r"warm_concurrency 0: allowed 1..64"),
        ("checkpoint_secs = 0", r"checkpoint_secs 0.0: allowed above 0, at most 3600"),
        ("reconnect_min_secs = 5\nreconnect_max_secs = 1", r"reconnect_min_secs 5.0 is above reconnect_max_secs 1.0"),
        ('channel = "BOTH"', r"screener configuration: Expected `str` matching|screener configuration: Invalid enum"),
        ("colour = 1", r"screener configuration: Object contains unknown field `colour`"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(tmp_path: Path, toml: str, refusal: str) -> None:
    path = tmp_path / "screener.toml"
    path.write_text(toml + "\n")
    with pytest.raises(ConfigError, match=refusal):
        load_config(str(path), {})


def test_an_unreadable_file_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file .*missing.toml"):
        load_config(str(tmp_path / "missing.toml"), {})
