"""Gateway configuration: defaults that front the default local node and screener, the file,
then SPINE_GATEWAY_* variables over it; every bad value refused naming the key and what is
allowed; the deployment mode server-side only, public-readonly for anything but the exact
private-operator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from spine.gateway.config import ConfigError, load_config


def test_the_defaults_front_the_default_local_processes() -> None:
    config = load_config(None, {})
    assert (config.nodes, config.screener) == (["http://127.0.0.1:8700"], "http://127.0.0.1:8710")
    assert (config.host, config.port, config.mode) == ("127.0.0.1", 8800, "public-readonly")


def test_the_environment_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text('nodes = ["http://10.0.0.1:8700"]\nport = 9000\nscreener = "http://10.0.0.2:8710"\n')
    config = load_config(
        str(path),
        {
            "SPINE_GATEWAY_NODES": "http://a:1,http://b:2",
            "SPINE_GATEWAY_PORT": "9100",
            "SPINE_DEPLOYMENT_MODE": "private-operator",
        },
    )
    assert (config.nodes, config.port, config.screener) == (["http://a:1", "http://b:2"], 9100, "http://10.0.0.2:8710")
    assert config.mode == "private-operator"
    assert load_config(None, {"SPINE_DEPLOYMENT_MODE": "Private-Operator"}).mode == "public-readonly"


@pytest.mark.parametrize(
    ("toml", "refusal"),
    [
        ("nodes = []", r"nodes: 0 given; allowed 1..64 base URLs"),
        ('nodes = ["127.0.0.1:8700"]', r"nodes: '127.0.0.1:8700' is not a node base URL"),
        ('nodes = ["http://h:1", "http://h:1"]', r"repeats a base URL; each node is listed once"),
        ('screener = "http://h:1/v2"', r"screener: 'http://h:1/v2' is not a screener base URL"),
        ("refresh_secs = 0", r"refresh_secs 0.0: allowed above 0, at most 3600"),
        ("upstream_timeout_secs = 4000", r"upstream_timeout_secs 4000.0: allowed above 0, at most 3600"),
        ("port = 70000", r"port 70000: allowed 1..65535"),
        ("colour = 1", r"gateway configuration: Object contains unknown field `colour`"),
    ],
)
def test_bad_values_are_refused_naming_them(tmp_path: Path, toml: str, refusal: str) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(toml + "\n")
    with pytest.raises(ConfigError, match=refusal):
        load_config(str(path), {})


def test_a_bad_configuration_exits_2_naming_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spine.cli", "gateway", "--node", "nowhere"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "SPINE_DATA_DIR": str(tmp_path)},
    )
    assert done.returncode == 2 and "nodes: 'nowhere' is not a node base URL" in done.stderr


def test_flags_override_the_file_and_the_environment(tmp_path: Path) -> None:
    from spine.settings import flag_overrides

    environ = flag_overrides(
        {"SPINE_GATEWAY_PORT": "9000", "OTHER": "x"},
        "SPINE_GATEWAY",
        nodes=("http://a:1", "http://b:2"),
        screener=None,
        port=9100,
        data_dir=None,
    )
    assert environ == {"SPINE_GATEWAY_PORT": "9100", "OTHER": "x", "SPINE_GATEWAY_NODES": "http://a:1,http://b:2"}
    config = load_config(None, environ)
    assert (config.nodes, config.port) == (["http://a:1", "http://b:2"], 9100)
    assert flag_overrides({}, "SPINE_GATEWAY", nodes=()) == {}
