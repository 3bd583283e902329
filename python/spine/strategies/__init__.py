"""Strategy authoring: documents, templates, registries and revisions.

A table of contents; the logic lives in the submodules:

* :mod:`~spine.strategies.paths`: file paths and the caps of a revision's file set;
* :mod:`~spine.strategies.document`: ``strategy.toml`` validated, and the plan a run takes
  (:mod:`~spine.strategies.reader`, :mod:`~spine.strategies.rules`, :mod:`~spine.strategies.locate`
  do the reading, the rule grammar and the line numbers);
* :mod:`~spine.strategies.conditions`: the condition and authoring registries;
* :mod:`~spine.strategies.templates`: the templates (package data ``templates/*.toml``);
* :mod:`~spine.strategies.revisions`: revision ids, conflicts and the strategy documents;
* :mod:`~spine.strategies.plan`: :class:`StrategyPlan`, what the runtime takes.
"""

from __future__ import annotations

from spine.strategies.diagnostics import Diagnostic
from spine.strategies.errors import ParameterOverrideError, StrategyDocumentError, StrategyError, StrategyFileError
from spine.strategies.plan import RULE_NAMES, FeatureDecl, ParameterDecl, StrategyPlan

__all__ = [
    "Diagnostic",
    "FeatureDecl",
    "ParameterDecl",
    "ParameterOverrideError",
    "RULE_NAMES",
    "StrategyDocumentError",
    "StrategyError",
    "StrategyFileError",
    "StrategyPlan",
]
