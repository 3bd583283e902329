"""Node configuration: the deployment mode (pinned decision 7), read from the file or
SPINE_DEPLOYMENT_MODE only; anything but an exact private-operator resolves to public-readonly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spine.node.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, "public-readonly"),
        ("public-readonly", "public-readonly"),
        ("private-operator", "private-operator"),
        ("Private-Operator", "public-readonly"),
        ("private-operator ", "public-readonly"),
        ("", "public-readonly"),
        ("operator", "public-readonly"),
    ],
)
def test_the_environment_sets_the_mode_and_unknown_values_are_public(value: str | None, mode: str) -> None:
    environ = {} if value is None else {"SPINE_DEPLOYMENT_MODE": value}
    assert load_config(None, environ).mode == mode


def test_the_file_sets_the_mode_and_the_environment_overrides_it(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text('deployment_mode = "private-operator"\n')
    assert load_config(str(path), {}).mode == "private-operator"
    assert load_config(str(path), {"SPINE_DEPLOYMENT_MODE": "public-readonly"}).mode == "public-readonly"


# Each bounded setting: a value outside its range is refused naming the key and what is allowed.
RANGES = {
    "stream_heartbeat_secs": (["0", "-1", "3601"], "allowed above 0, at most 3600"),
    "http_body_secs": (["0", "-1", "3601"], "allowed above 0, at most 3600"),
    "external_grace_secs": (["-1", "3601"], "allowed 0..3600"),
    "port": (["0", "65536"], "allowed 1..65535"),
    "http_backlog": (["0", "65536"], "allowed 1..65535"),
    "gil_switch_secs": (["0", "0.000001", "0.5"], "allowed 0.00001..0.1"),
}


@pytest.mark.parametrize(("key", "text"), [(key, text) for key, (bad, _) in RANGES.items() for text in bad])
def test_a_setting_outside_its_range_is_refused_naming_it(tmp_path: Path, key: str, text: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f"{key} = {text}\n")
    with pytest.raises(ConfigError, match=rf"{key} .*{RANGES[key][1]}"):
        load_config(str(path), {})


def test_bounded_settings_default_and_take_a_value_inside_their_range(tmp_path: Path) -> None:
    defaults = load_config(None, {})
    assert (defaults.stream_heartbeat_secs, defaults.http_body_secs, defaults.external_grace_secs) == (15.0, 10.0, 5.0)
    path = tmp_path / "node.toml"
    path.write_text("stream_heartbeat_secs = 0.5\nhttp_body_secs = 3600\nexternal_grace_secs = 0\n")
    taken = load_config(str(path), {})
    assert (taken.stream_heartbeat_secs, taken.http_body_secs, taken.external_grace_secs) == (0.5, 3600, 0)


@pytest.mark.parametrize("speed", ["0", "-1", "3600.5", "1e9"])
def test_a_sim_speed_outside_its_range_is_refused_naming_it(speed: str) -> None:
    with pytest.raises(ConfigError, match=r"sim.speed .*allowed above 0, at most 3600"):
        load_config(None, {"SPINE_SIM_SPEED": speed})


def test_the_sim_speed_takes_its_highest_value() -> None:
    assert load_config(None, {"SPINE_SIM_SPEED": "3600"}).sim.speed == 3600.0


@pytest.mark.parametrize("name", ["SIM", "SIMB", "S", "SIM_2", "A1B2", "X" * 32])
def test_the_sim_venue_name_takes_an_upper_case_symbol(tmp_path: Path, name: str) -> None:
    path = tmp_path / "node.toml"
    path.write_text(f'[sim]\nvenue_name = "{name}"\n')
    assert load_config(str(path), {}).venue_name == name
    assert load_config(None, {"SPINE_SIM_VENUE_NAME": name}).sim.venue_name == name


@pytest.mark.parametrize("name", ["", "sim", "Simb", "1SIM", "_SIM", "SIM-B", "SIM.B", "SIM B", " SIM", "X" * 33])
def test_a_sim_venue_name_not_an_upper_case_symbol_is_refused_naming_it(name: str) -> None:
    with pytest.raises(
        ConfigError,
        match=rf"sim.venue_name '{re.escape(name)}': allowed an upper-case letter.*"
        r"\^\[A-Z\]\[A-Z0-9_\]\*\$.*at most 32 characters",
    ):
        load_config(None, {"SPINE_SIM_VENUE_NAME": name})


def test_the_venue_name_defaults_to_sim_and_names_an_adapter_by_its_integration() -> None:
    assert load_config(None, {}).venue_name == "SIM"
    assert load_config(None, {"SPINE_VENUE": "binance", "SPINE_SIM_VENUE_NAME": "SIMB"}).venue_name == "BINANCE"


def test_the_sim_history_plan_names_instruments_of_the_configured_venue(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text('[sim]\nvenue_name = "SIMB"\n[sim.history]\n"BTCUSDT.SIMB" = "failed"\n')
    assert load_config(str(path), {}).sim.history == {"BTCUSDT.SIMB": "failed"}
    path.write_text('[sim]\nvenue_name = "SIMB"\n[sim.history]\n"BTCUSDT.SIM" = "failed"\n')
    with pytest.raises(ConfigError, match=r"sim.history names 'BTCUSDT.SIM': allowed instrument ids of venue SIMB"):
        load_config(str(path), {})
