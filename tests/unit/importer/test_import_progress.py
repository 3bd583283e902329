"""The progress line: shown on a TTY or past 100,000 rows, one line rewritten in place."""

from __future__ import annotations

import io

from spine.importer.progress import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_small_file_not_on_a_tty_shows_nothing() -> None:
    stream = io.StringIO()
    progress = Progress(500, stream=stream)
    progress.update("read", 500, final=True)
    progress.close()
    assert stream.getvalue() == ""


def test_tty_shows_one_rewritten_line() -> None:
    stream = Tty()
    progress = Progress(500, stream=stream)
    progress.update("read", 100, final=True)
    progress.update("read", 101)  # throttled: within 0.2 s of the last
    progress.update("read", 500, final=True)
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "spine import: read 500/500 rows (" in text and "rows/s)" in text


def test_long_file_shows_without_a_tty_and_unknown_totals_once_past_the_threshold() -> None:
    stream = io.StringIO()
    Progress(100_001, stream=stream).update("read", 10, final=True)
    assert stream.getvalue().startswith("\rspine import: read 10/100,001 rows")
    unknown = io.StringIO()
    progress = Progress(None, stream=unknown)
    progress.update("read", 100_000, final=True)
    assert unknown.getvalue() == ""
    progress.update("read", 100_001, final=True)
    assert unknown.getvalue().startswith("\rspine import: read 100,001 rows")
