"""What a public document may say about a failure: a wire symbol and a plain reason, never a
traceback, a file path, an exception class name or an internal address (those go to the log).

:func:`public_reason` is how a failed run's reason is formed: a Spine refusal (a
:class:`spine.errors.SpineError`, its message led by its wire symbol and written for any
reader) is kept; anything else is :data:`INTERNAL_RUN`. :func:`scrub` is the last guard on
every text a public route serves from stored runs, rows written before these rules included.
"""

from __future__ import annotations

import re

from spine.errors import SpineError

__all__ = ["INTERNAL_RUN", "public_reason", "scrub"]

#: A failed run's reason when the failure was not one of Spine's own refusals.
INTERNAL_RUN = "INTERNAL: the run failed; the worker's log has its error"

#: An absolute path of two segments or more (``/v2/...`` routes are not paths on a disk).
_PATH = re.compile(r"(?<![\w.~/-])/(?!v[12]/)[\w.@+~-]+(?:/[\w.@+~-]*)+")
#: A URL, or an address with a port.
#: (Bounded repeats where a failed match would retry from many starts: a text of a few
#: thousand characters is scrubbed in linear time.)
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]{0,15}://[^\s'\"<>,;)]*[^\s'\"<>,;):.]|"
    r"(?<![\w.])(?:\d{1,3}(?:\.\d{1,3}){3}|localhost|\[[0-9a-fA-F:]{2,39}\])(?::\d{1,5})?(?![\w.])"
)
#: Text opening with an exception's class name (``KeyError: 'x'``, ``decimal.InvalidOperation``),
#: or quoting a class anywhere (``[<class 'decimal.InvalidOperation'>]``).
_CLASS = re.compile(
    r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b|"
    r"^(?:[a-z_]\w*\.)+[A-Z]\w*|<class '"
)
#: A wire symbol leading a reason (``NO_BARS: ...``).
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9_]*: ")


def public_reason(error: BaseException) -> str:
    """The reason a public document gives for ``error``: its own text when it is a Spine
    refusal led by a wire symbol, else :data:`INTERNAL_RUN`."""
    text = str(error)
    if isinstance(error, SpineError) and _SYMBOL.match(text):
        return scrub(text)
    return INTERNAL_RUN


def scrub(text: str) -> str:
    """``text`` fit for a public route: a traceback or a text opening with an exception class
    becomes :data:`INTERNAL_RUN`; paths and addresses are replaced by ``<path>`` and
    ``<address>``."""
    if "Traceback (most recent call last)" in text or _CLASS.search(text):
        return INTERNAL_RUN
    return _PATH.sub("<path>", _ADDRESS.sub("<address>", text))
