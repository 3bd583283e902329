"""Every process package has one shape: ``config.py`` (settings and their environment keys),
``main.py`` (the command), ``service.py`` (state and lifecycle) and, for a process that serves
HTTP, ``api.py`` (handlers and the app, reading the service through a typed Protocol). The
api and the service never import each other; ``main.py`` puts them together. A server process
does not load the client-side decoder (nor jsonschema with it)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from imports import PACKAGE, imported

#: Process package -> whether it serves a protocol (HTTP; the tool server's MCP) and so has an api.py.
PROCESSES = {"gateway": True, "screener": True, "worker": False, "importer": False, "tools": True}


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_a_process_package_has_the_shape(process: str) -> None:
    held = {path.name for path in (PACKAGE / process).glob("*.py")}
    assert {"config.py", "main.py", "service.py"} <= held
    assert ("api.py" in held) is PROCESSES[process]


@pytest.mark.parametrize("process", sorted(name for name, serves in PROCESSES.items() if serves))
def test_the_api_and_the_service_never_import_each_other(process: str) -> None:
    api, service = f"spine.{process}.api", f"spine.{process}.service"
    assert service not in imported(PACKAGE / process / "api.py")
    assert api not in imported(PACKAGE / process / "service.py")


@pytest.mark.parametrize("module", ["spine.gateway.service", "spine.screener.service", "spine.wire"])
def test_a_server_process_loads_no_client_decoder(module: str) -> None:
    probe = (
        f"import sys, {module}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema' or m == 'spine.wire.decoder'))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_wire_package_still_exports_the_decoder() -> None:
    import spine.wire
    from spine.wire import decoder

    assert spine.wire.DECODER_NAMES == tuple(decoder.__all__)
    assert all(getattr(spine.wire, name) is getattr(decoder, name) for name in decoder.__all__)
    assert spine.wire.decoder is decoder
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        spine.wire.nothing  # noqa: B018
