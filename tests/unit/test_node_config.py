"""Node configuration: the deployment mode (pinned decision 7), read from the file or
SPINE_DEPLOYMENT_MODE only; anything but an exact private-operator resolves to public-readonly."""

from __future__ import annotations

from pathlib import Path

import pytest

from spine.node.config import ConfigError, load_config


@pytest.mark.parametrize(("value", "mode"), [
    (None, "public-readonly"), ("public-readonly", "public-readonly"), ("private-operator", "private-operator"),
    ("Private-Operator", "public-readonly"), ("private-operator ", "public-readonly"), ("", "public-readonly"),
    ("operator", "public-readonly"),
])
def test_the_environment_sets_the_mode_and_unknown_values_are_public(value: str | None, mode: str) -> None:
    environ = {} if value is None else {"SPINE_DEPLOYMENT_MODE": value}
    assert load_config(None, environ).mode == mode


def test_the_file_sets_the_mode_and_the_environment_overrides_it(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text('deployment_mode = "private-operator"\n')
    assert load_config(str(path), {}).mode == "private-operator"
    assert load_config(str(path), {"SPINE_DEPLOYMENT_MODE": "public-readonly"}).mode == "public-readonly"


@pytest.mark.parametrize("text", ["0", "-1", "3601"])
def test_a_stream_heartbeat_outside_its_range_is_refused_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f"stream_heartbeat_secs = {text}\n")
    with pytest.raises(ConfigError, match=r"stream_heartbeat_secs .*allowed above 0, at most 3600"):
        load_config(str(path), {})


def test_the_stream_heartbeat_defaults_to_15_seconds(tmp_path: Path) -> None:
    assert load_config(None, {}).stream_heartbeat_secs == 15.0
    path = tmp_path / "node.toml"
    path.write_text("stream_heartbeat_secs = 0.5\n")
    assert load_config(str(path), {}).stream_heartbeat_secs == 0.5


@pytest.mark.parametrize("text", ["0", "-1", "3601"])
def test_a_body_deadline_outside_its_range_is_refused_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f"http_body_secs = {text}\n")
    with pytest.raises(ConfigError, match=r"http_body_secs .*allowed above 0, at most 3600"):
        load_config(str(path), {})
    assert load_config(None, {}).http_body_secs == 10.0


@pytest.mark.parametrize("text", ["-1", "3601"])
def test_external_grace_outside_its_range_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f"external_grace_secs = {text}\n")
    with pytest.raises(ConfigError, match=r"external_grace_secs .*allowed 0..3600"):
        load_config(str(path), {})


def test_external_grace_defaults_to_five_seconds() -> None:
    assert load_config(None, {}).external_grace_secs == 5.0
