"""Suite-wide test configuration: the hypothesis profiles.

``SPINE_HYPOTHESIS_PROFILE`` picks one:

* ``fast`` (the default): about 50 examples per property, no deadline; the whole property
  suite stays well under a minute on a small machine;
* ``thorough``: 2,000 examples per property, for a long local run before a release;
* ``ci``: as ``fast`` but derandomized (the same examples on every run, so a red CI run
  reproduces locally) and printing the reproduction blob of any failure.

Every profile skips hypothesis' "too slow" health check: it times data generation, which on a
small shared CI machine says more about the machine than about the strategies.

Because this conftest.py sits in a directory without ``__init__.py``, pytest (in its default
"prepend" import mode) puts ``tests/`` on ``sys.path``, so tests import the plain-Python
oracles as ``reference.*``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("fast", max_examples=50, **_COMMON)
settings.register_profile("thorough", max_examples=2000, **_COMMON)
settings.register_profile("ci", max_examples=50, derandomize=True, print_blob=True, database=None, **_COMMON)

PROFILE = os.environ.get("SPINE_HYPOTHESIS_PROFILE", "fast")
if PROFILE not in ("fast", "thorough", "ci"):
    raise ValueError(f"SPINE_HYPOTHESIS_PROFILE={PROFILE!r}: expected one of 'fast', 'thorough', 'ci'")
settings.load_profile(PROFILE)
