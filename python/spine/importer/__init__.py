"""``spine import``: bring your own OHLCV bars (CSV or Parquet) into a node's EXTERNAL
catalog root, exactly, all or nothing. See :mod:`.service` for the flow and the rules.

The process shape: :mod:`.config` (the import's options, from the command's flags: no file
and no environment keys), :mod:`.main` (the command) and :mod:`.service` (one import). No
``api.py``: it serves no HTTP."""

from spine.importer.config import DEFAULT_CATALOG_DIR, ImportOptions
from spine.importer.refusal import ImportRefused
from spine.importer.service import Summary, run_import

__all__ = ["DEFAULT_CATALOG_DIR", "ImportOptions", "ImportRefused", "Summary", "run_import"]
