"""spine.lifeline in real processes: a child named its parent ends when the parent dies
(SIGTERM by PR_SET_PDEATHSIG) or exits at once when the parent is already gone; its own
children do not inherit the variable; and SIGTERM sent while it is held waits for a handler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from spine.lifeline import PARENT_VARIABLE, hold_stop_signals

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

WAIT_SECS = 30.0

#: A middle process that starts a grandchild naming the middle as its parent, prints the
#: grandchild's pid, then waits to be killed.
MIDDLE = f"""
import os, subprocess, sys, time
env = dict(os.environ, {PARENT_VARIABLE}=str(os.getpid()))
child = subprocess.Popen([sys.executable, "-c", "from spine.lifeline import die_with_parent; die_with_parent(); "
                          "import os, time; print(os.environ.get('{PARENT_VARIABLE}'), flush=True); time.sleep(600)"],
                         env=env, stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def until_gone(pid: int) -> bool:
    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_child_dies_with_its_parent_and_does_not_pass_the_variable_on() -> None:
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdout=subprocess.PIPE, text=True)
    try:
        assert middle.stdout is not None
        pid, inherited = middle.stdout.readline().split()
        assert inherited == "None"  # removed from its environment once read
        assert alive(int(pid))
        middle.kill()
        middle.wait()
        assert until_gone(int(pid)), "the orphan outlived its parent"
    finally:
        if middle.poll() is None:
            middle.kill()
            middle.wait()
        assert middle.stdout is not None
        middle.stdout.close()


def test_a_child_whose_parent_is_already_gone_exits_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from spine.lifeline import die_with_parent; die_with_parent(); print('still here')"],
        env=dict(os.environ, **{PARENT_VARIABLE: "1"}),
        capture_output=True,
        text=True,
        timeout=WAIT_SECS,
    )
    assert (done.returncode, done.stdout) == (70, "")


def test_a_held_sigterm_reaches_the_handler_installed_later() -> None:
    script = (
        "import signal, time, sys\n"
        "time.sleep(0.5)\n"  # the SIGTERM arrives here, held
        "signal.signal(signal.SIGTERM, lambda *_: (print('handled', flush=True), sys.exit(0)))\n"
        "from spine.lifeline import release_stop_signals; release_stop_signals()\n"
        "time.sleep(600)\n"
    )
    with hold_stop_signals():
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=WAIT_SECS)
    assert (child.returncode, out) == (0, "handled\n")
