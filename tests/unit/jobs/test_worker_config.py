"""The worker's configuration: defaults, file, environment and flags, and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from spine.cli import build_parser
from spine.settings import ConfigError, flag_overrides
from spine.worker.config import load_config, split_runner

RUNNER = {"SPINE_WORKER_RUNNER": "json:loads"}  # any importable module: spine.backtest may be absent


def test_defaults_meet_the_gateway_store_and_the_default_node_catalog() -> None:
    config = load_config(None, RUNNER)
    assert config.database_url == "sqlite:///var/spine-gateway/spine.db"
    assert config.catalogs == ["var/spine/catalog"]
    assert (config.heartbeat_secs, config.stale_secs, config.max_attempts) == (2.0, 10.0, 2)
    assert config.name  # host-pid when no id is given


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    file = tmp_path / "worker.toml"
    file.write_text('worker_id = "from-file"\ncatalogs = ["a", "b"]\nheartbeat_secs = 1.0\ndata_dir = "d"\n')
    config = load_config(str(file), RUNNER)
    assert (config.name, config.catalogs, config.heartbeat_secs, config.database_url) == (
        "from-file",
        ["a", "b"],
        1.0,
        "sqlite:///d/spine.db",
    )
    environ = {
        **RUNNER,
        "SPINE_WORKER_ID": "from-env",
        "SPINE_WORKER_CATALOGS": "x, y",
        "SPINE_WORKER_STALE_SECS": "30",
    }
    config = load_config(str(file), environ)
    assert (config.name, config.catalogs, config.stale_secs) == ("from-env", ["x", "y"], 30.0)
    flagged = flag_overrides(
        environ, "SPINE_WORKER", database="postgresql+psycopg://h/db", catalogs=("z",), id="from-flag", data_dir=None
    )
    config = load_config(str(file), flagged)
    assert (config.name, config.catalogs, config.database_url) == ("from-flag", ["z"], "postgresql+psycopg://h/db")


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("bogus = 1", "bogus"),
        ("stale_secs = 3.0\nheartbeat_secs = 2.0", "twice heartbeat_secs"),
        ("poll_secs = 0.0", "poll_secs 0.0"),
        ("max_attempts = 0", "max_attempts 0"),
        ("catalogs = []", "catalogs"),
        ('runner = "no_such_module_here:run"', "no module 'no_such_module_here'"),
        ('runner = "nocolon"', "allowed 'package.module:function'"),
    ],
)
def test_refusals_name_the_key(tmp_path: Path, text: str, refusal: str) -> None:
    file = tmp_path / "worker.toml"
    file.write_text(('runner = "json:loads"\n' if "runner" not in text else "") + text + "\n")
    with pytest.raises(ConfigError, match=refusal):
        load_config(str(file), {})


def test_runner_paths_split_on_a_colon_or_the_last_dot() -> None:
    assert split_runner("spine.backtest.job:run") == ("spine.backtest.job", "run")
    assert split_runner("spine.backtest.job.run") == ("spine.backtest.job", "run")


def test_the_cli_parses_the_worker_command() -> None:
    args = build_parser().parse_args(
        ["worker", "--database", "sqlite:///x.db", "--catalog", "a", "--catalog", "b", "--id", "w1"]
    )
    assert (args.database, args.catalog, args.id, args.data_dir, args.config) == (
        "sqlite:///x.db",
        ["a", "b"],
        "w1",
        None,
        None,
    )
