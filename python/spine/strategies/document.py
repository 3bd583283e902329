"""The declarative strategy document ``strategy.toml``: validation and the plan a run takes.

* :func:`validate` names every problem of a revision's files (svc.validation_receipt rows);
* :func:`plan` is the :class:`StrategyPlan` at the defaults or at a request's overrides;
* :func:`check_overrides` checks overrides against the declared parameters;
* :func:`header` reads a revision's name, template and instruments, best effort.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from spine import _core
from spine.strategies.catalog import registry_features
from spine.strategies.diagnostics import Diagnostic
from spine.strategies.errors import ParameterOverrideError, StrategyDocumentError
from spine.strategies.locate import dotted, locate, syntax_line
from spine.strategies.nesting import nesting_problem
from spine.strategies.paths import ENTRY, file_problems
from spine.strategies.plan import RULE_NAMES, FeatureDecl, ParameterDecl, StrategyPlan
from spine.strategies.reader import Document, read_document
from spine.strategies.rules import Path, check_between, condition_keys, substitute
from spine.strategies.values import (
    exact,
    is_decimal,
    is_instrument_id,
    is_integer,
    is_name,
    reference,
    sizing_problem,
)

__all__ = ["validate", "plan", "check_overrides", "header", "Header", "load"]

Channel = Literal["EXTERNAL", "INTERNAL"]
Direction = Literal["LONG_ONLY", "SHORT_ONLY", "LONG_SHORT"]


def _other_file(path: str, content: str) -> Diagnostic | None:
    """A note or data file that does not parse (TOML and JSON only; text and CSV are free)."""
    deep = nesting_problem(path, content)
    if deep is not None:
        return Diagnostic(path, deep[0], "ERROR", deep[1])
    if path.endswith(".toml"):
        try:
            tomllib.loads(content)
        except tomllib.TOMLDecodeError as error:
            return Diagnostic(path, syntax_line(str(error)), "ERROR", f"TOML syntax: {error}")
    elif path.endswith(".json"):
        try:
            json.loads(content)
        except json.JSONDecodeError as error:
            return Diagnostic(path, error.lineno, "ERROR", f"JSON syntax: {error}")
    return None


def load(files: Mapping[str, str]) -> tuple[Document | None, list[Diagnostic]]:
    """The checked document (None when any problem is an ERROR) and every problem of the
    file set and of the files as written (before parameter values are applied)."""
    diagnostics: list[Diagnostic] = []
    for path, reason in file_problems(files):
        diagnostics.append(Diagnostic(path if path is not None else ENTRY, None, "ERROR", reason))
    for path, content in sorted(files.items()):
        if path != ENTRY and isinstance(content, str):
            problem = _other_file(path, content)
            if problem is not None:
                diagnostics.append(problem)
    text = files.get(ENTRY)
    if not isinstance(text, str):
        return None, diagnostics
    document = read_document(ENTRY, text, diagnostics)
    if any(d.severity == "ERROR" for d in diagnostics):
        return None, diagnostics
    return document, diagnostics


def _resolve(
    doc: Document,
    values: Mapping[str, str],
    diagnostics: list[Diagnostic],
    known_instrument: Callable[[str], bool] | None = None,
) -> StrategyPlan | None:
    """The plan at ``values`` (checked parameter values), reporting what only values show."""
    errors_before = sum(d.severity == "ERROR" for d in diagnostics)

    def report(path: Path, message: str) -> None:
        diagnostics.append(Diagnostic(ENTRY, locate(doc.text, path), "ERROR", f"{dotted(path)}: {message}"))

    def value(text: str) -> str:
        name = reference(text)
        return values[name] if name is not None else text

    def shown(text: str) -> str:
        return f"{text!r}" if reference(text) is None else f"{text!r} (= {value(text)!r})"

    features: list[FeatureDecl] = []
    for feature in doc.features:
        parameters = {k: value(v) for k, v in feature.parameters.items()}
        for key, text in feature.parameters.items():
            if not is_decimal(parameters[key]):
                report(("features", feature.feature_id, key), f"{shown(text)} is not an exact decimal")
        features.append(FeatureDecl(feature.feature_id, feature.kind.implementation, parameters))
    declared = {f.feature_id for f in doc.features}
    read = {key.split(".", 1)[0] for rule in doc.rules.values() for key in condition_keys(rule)}
    for registry in registry_features():
        if registry.feature_id in read and registry.feature_id not in declared:
            features.append(FeatureDecl(registry.feature_id, registry.implementation, dict(registry.parameters)))
    rules: dict[str, str] = {}
    for name in RULE_NAMES:
        if name in doc.rules:
            condition = substitute(doc.rules[name], values)
            check_between(condition, ("rules", name), report)
            rules[name] = _core.canonical_json(condition).decode()
    sizing_key, sizing_text = doc.sizing
    size = value(sizing_text)
    if (problem := sizing_problem(sizing_key, size)) is not None:
        report(("sizing", sizing_key), f"{shown(sizing_text)} {problem}")
    risk: dict[str, str | None] = {}
    for key in ("stop_loss", "take_profit"):
        text = getattr(doc, key)
        risk[key] = None if text is None else value(text)
        if text is not None and not 0 < exact(value(text)) < 1:
            report(("risk", key), f"{shown(text)} must be a fraction of the entry price in (0, 1)")
    if known_instrument is not None:
        for index, instrument in enumerate(doc.instruments):
            if not known_instrument(instrument):
                report(("strategy", "instruments", index), f"unknown instrument {instrument!r}")
    if sum(d.severity == "ERROR" for d in diagnostics) > errors_before:
        return None
    return StrategyPlan(
        name=doc.name,
        template_id=doc.template_id,
        instruments=list(doc.instruments),
        resolution=doc.resolution,
        channel=cast(Channel, doc.channel),
        direction=cast(Direction, doc.direction),
        parameters=list(doc.parameters),
        values=dict(values),
        features=features,
        rules=rules,
        quantity=size if sizing_key == "quantity" else None,
        fraction=size if sizing_key == "fraction" else None,
        notional=size if sizing_key == "notional" else None,
        stop_loss=risk["stop_loss"],
        take_profit=risk["take_profit"],
    )


def _kernel_problem(built: StrategyPlan) -> str | None:
    """What the runtime kernel refuses in the plan, when the extension has one."""
    kernel = getattr(_core, "StrategyKernel", None)
    if kernel is None:
        return None
    try:
        kernel(
            features=[(f.feature_id, f.implementation, dict(f.parameters)) for f in built.features],
            rules=list(built.rules.items()),
            price_scale=8,
            size_scale=8,
        )
    except ValueError as error:
        return str(error)
    return None


def validate(files: Mapping[str, str], known_instrument: Callable[[str], bool] | None = None) -> list[Diagnostic]:
    """Every problem of a revision's files: the file set (paths, sizes, the entry), syntax of
    every TOML and JSON file, and ``strategy.toml``'s tables, keys, parameters, features,
    rules, sizing and risk at the parameters' defaults; instruments are checked against
    ``known_instrument`` when given. The revision is valid when no diagnostic is an ERROR."""
    doc, diagnostics = load(files)
    if doc is None:
        return diagnostics
    defaults = {p.name: p.default for p in doc.parameters}
    built = _resolve(doc, defaults, diagnostics, known_instrument)
    if built is None:
        return diagnostics
    problem = _kernel_problem(built)
    if problem is not None:
        diagnostics.append(Diagnostic(ENTRY, None, "ERROR", f"the strategy kernel refuses the plan: {problem}"))
        return diagnostics
    # A study searches the ranges: say so when their ends do not make a plan.
    for end in ("min", "max"):
        found: list[Diagnostic] = []
        at_end = _resolve(doc, {p.name: getattr(p, end) for p in doc.parameters}, found)
        problem = _kernel_problem(at_end) if at_end is not None else None
        if problem is not None:
            found.append(Diagnostic(ENTRY, None, "ERROR", f"the strategy kernel refuses the plan: {problem}"))
        for d in found:
            diagnostics.append(Diagnostic(d.path, d.line, "WARNING", f"with every parameter at its {end}: {d.message}"))
    return diagnostics


def check_overrides(parameters: list[ParameterDecl], overrides: Mapping[str, str] | None) -> dict[str, str]:
    """The values a run uses: each parameter's default unless overridden.

    # Errors
    :class:`ParameterOverrideError` naming each unknown parameter (and the declared ones), each
    value of the wrong type and each value outside its range.
    """
    declared = {p.name: p for p in parameters}
    values = {p.name: p.default for p in parameters}
    problems: list[str] = []
    for name, text in (overrides or {}).items():
        decl = declared.get(name)
        if decl is None:
            problems.append(f"unknown parameter {name!r}; declared: {', '.join(declared) or 'none'}")
            continue
        span = f"{decl.type} in {decl.min}..{decl.max}"
        if not isinstance(text, str) or not (is_integer(text) if decl.type == "integer" else is_decimal(text)):
            problems.append(f"parameter {name}: {text!r} is not an exact {decl.type} (as text); expected {span}")
        elif not exact(decl.min) <= exact(text) <= exact(decl.max):
            problems.append(f"parameter {name}: {text} is out of range; expected {span}")
        else:
            values[name] = text
    if problems:
        raise ParameterOverrideError("; ".join(problems))
    return values


def plan(files: Mapping[str, str], overrides: Mapping[str, str] | None = None) -> StrategyPlan:
    """The plan of a revision at its defaults, or at ``overrides`` (parameter -> exact text).

    # Errors
    :class:`StrategyDocumentError` (its ``diagnostics`` every problem) when the revision is
    invalid or the overridden values make it so (a BETWEEN turned around, a zero quantity);
    :class:`ParameterOverrideError` for an override naming no parameter, of the wrong type or
    out of range.
    """
    doc, diagnostics = load(files)
    if doc is None:
        raise StrategyDocumentError(diagnostics)
    values = check_overrides(doc.parameters, overrides)
    built = _resolve(doc, values, diagnostics)
    if built is None:
        raise StrategyDocumentError(diagnostics)
    return built


@dataclass(frozen=True)
class Header:
    """What a listing shows of a revision: read best effort, never refused."""

    name: str | None
    template_id: str | None
    instruments: list[str]


def header(files: Mapping[str, str]) -> Header:
    """``[strategy]``'s name, template and instruments (the well-formed ones, distinct); empty
    when ``strategy.toml`` is missing or does not parse."""
    text = files.get(ENTRY, "")
    try:
        data: Any = None if nesting_problem(ENTRY, text) else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, TypeError):
        data = None
    if not isinstance(data, dict):
        return Header(None, None, [])
    table = data.get("strategy")
    if not isinstance(table, dict):
        return Header(None, None, [])
    name = table.get("name") if isinstance(table.get("name"), str) and 0 < len(table["name"]) <= 128 else None
    template = table.get("template") if isinstance(table.get("template"), str) else None
    raw = table.get("instruments")
    instruments: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, str) and is_instrument_id(item) and item not in instruments:
            instruments.append(item)
    return Header(name, template if template is not None and is_name(template) else None, instruments)
