"""``spine import``: bring your own OHLCV bars (CSV or Parquet) into a node's EXTERNAL
catalog root, exactly, all or nothing. See :mod:`.run` for the flow and the rules."""

from spine.importer.options import DEFAULT_CATALOG_DIR, ImportOptions
from spine.importer.refusal import ImportRefused
from spine.importer.run import Summary, run_import

__all__ = ["DEFAULT_CATALOG_DIR", "ImportOptions", "ImportRefused", "Summary", "run_import"]
