"""Reading ``strategy.toml`` into a :class:`Document`: the strategy as written, every value
checked, ``"{param}"`` references still in place. Every problem is reported with the line of
its table or key (see :mod:`spine.strategies.locate`); the document is None when any is an
ERROR."""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from spine.strategies.catalog import (
    BAR_KEYS,
    OPTIONAL_PARAMETERS,
    FeatureKind,
    feature_kinds,
    registry_features,
    registry_row_keys,
)
from spine.strategies.diagnostics import Diagnostic, Severity
from spine.strategies.locate import dotted, locate, syntax_line
from spine.strategies.nesting import data_problem, nesting_problem
from spine.strategies.plan import RULE_NAMES, ParameterDecl
from spine.strategies.rules import Path, check_condition
from spine.strategies.values import (
    CHANNELS,
    DIRECTIONS,
    INT64_MAX,
    INT64_MIN,
    RESOLUTIONS,
    TomlFloat,
    exact,
    is_decimal,
    is_name,
    reference,
)
from spine.wire.instruments import catalog_id_problem

__all__ = ["Document", "DeclaredFeature", "read_document", "MAX_PARAMETERS", "MAX_FEATURES", "MAX_INSTRUMENTS"]

MAX_PARAMETERS = 32
MAX_FEATURES = 32
MAX_INSTRUMENTS = 16
#: The ways to size an entry, one per strategy (``[sizing]``).
SIZINGS = ("quantity", "fraction", "notional")
_TABLES = {
    "": ("strategy", "parameters", "features", "rules", "sizing", "risk"),
    "strategy": ("name", "description", "template", "instruments", "resolution", "channel", "direction"),
    "parameter": ("type", "default", "min", "max", "description"),
    "rules": RULE_NAMES,
    "sizing": SIZINGS,
    "risk": ("stop_loss", "take_profit"),
}


@dataclass(frozen=True)
class DeclaredFeature:
    feature_id: str
    kind: FeatureKind
    #: Exact text values; a value may be a ``"{param}"`` reference.
    parameters: dict[str, str]


@dataclass
class Document:
    """A checked ``strategy.toml``, references unresolved."""

    text: str
    name: str = ""
    description: str = ""
    template_id: str | None = None
    instruments: list[str] = field(default_factory=list)
    resolution: str = "1m"
    channel: str = "EXTERNAL"
    direction: str = "LONG_ONLY"
    parameters: list[ParameterDecl] = field(default_factory=list)
    features: list[DeclaredFeature] = field(default_factory=list)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The one sizing key given (one of SIZINGS) and its exact text; a value may be a ``"{param}"``.
    sizing: tuple[str, str] = ("quantity", "")
    stop_loss: str | None = None
    take_profit: str | None = None


def _kind(value: object) -> str:
    if isinstance(value, TomlFloat):
        return "a float"
    return {bool: "a boolean", int: "an integer", str: "a string", list: "an array", dict: "a table"}.get(
        type(value), f"a TOML {type(value).__name__}"
    )


class _Reader:
    def __init__(self, entry: str, text: str, diagnostics: list[Diagnostic]) -> None:
        self.entry, self.text, self.diagnostics = entry, text, diagnostics
        self.errors = 0

    def report(self, path: Path, message: str, severity: Severity = "ERROR") -> None:
        where = dotted(path)
        self.errors += severity == "ERROR"
        self.diagnostics.append(
            Diagnostic(self.entry, locate(self.text, path), severity, f"{where}: {message}" if where else message)
        )

    def floats(self, node: object, path: Path) -> None:
        if isinstance(node, TomlFloat):
            self.report(path, f'float {str(node)!r} refused: decimals are strings ("0.02"), integers are TOML integers')
        elif isinstance(node, dict):
            for key, value in node.items():
                self.floats(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                self.floats(value, (*path, index))

    def table(
        self, node: object, path: Path, allowed: tuple[str, ...], required: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        if not isinstance(node, dict):
            self.report(path, f"must be a table, not {_kind(node)}")
            return {}
        for key in node:
            if key not in allowed:
                self.report(
                    (*path, key),
                    f"unknown key {key!r} in [{dotted(path)}]; allowed: {', '.join(allowed)}"
                    if path
                    else f"unknown table {key!r}; allowed: {', '.join(allowed)}",
                )
        for key in required:
            if key not in node:
                self.report(path, f"missing {key!r} in [{dotted(path)}]" if path else f"missing [{key}]")
        return node

    def wrong(self, path: Path, expected: str, value: object) -> None:
        if not isinstance(value, TomlFloat):  # floats are reported once, by floats()
            self.report(path, f"must be {expected}, not {_kind(value)}")

    def string(self, node: dict[str, Any], path: Path, key: str, limit: int, default: str | None = None) -> str | None:
        value = node.get(key, default)
        if value is None:
            return None
        if type(value) is not str:
            self.wrong((*path, key), "a string", value)
            return None
        if len(value) > limit:
            self.report((*path, key), f"at most {limit} characters ({len(value)})")
        return value

    def choice(self, node: dict[str, Any], path: Path, key: str, allowed: tuple[str, ...]) -> str:
        value = node.get(key, allowed[0])
        if value not in allowed:
            self.report((*path, key), f"{value!r} is not one of {', '.join(allowed)}")
            return allowed[0]
        return str(value)

    def decimal_text(self, value: object, path: Path, parameters: Collection[str]) -> str | None:
        """A decimal operand: decimal text or a reference to a declared parameter."""
        if type(value) is not str:
            self.wrong(path, 'a decimal string ("1", "0.02") or a "{parameter}" reference', value)
            return None
        name = reference(value)
        if name is not None:
            if name not in parameters:
                self.report(path, f"{value!r} names no declared parameter; declared: {', '.join(parameters) or 'none'}")
                return None
        elif not is_decimal(value):
            self.report(path, f"{value!r} is not an exact decimal (no exponent, no -0)")
            return None
        return value

    # sections

    def strategy(self, doc: Document, node: object) -> None:
        path: Path = ("strategy",)
        table = self.table(node, path, _TABLES["strategy"], ("name", "instruments"))
        name = self.string(table, path, "name", 128)
        if name is not None:
            doc.name = name
            if not name.strip():
                self.report((*path, "name"), "must not be empty")
        doc.description = self.string(table, path, "description", 4096) or ""
        template = self.string(table, path, "template", 64)
        if template is not None and not is_name(template):
            self.report((*path, "template"), f"{template!r} is not a template id (^[a-z][a-z0-9_]{{0,63}}$)")
        doc.template_id = template
        doc.resolution = self.choice(table, path, "resolution", RESOLUTIONS)
        doc.channel = self.choice(table, path, "channel", CHANNELS)
        doc.direction = self.choice(table, path, "direction", DIRECTIONS)
        instruments = table.get("instruments")
        if "instruments" not in table:
            return
        if not isinstance(instruments, list) or not 1 <= len(instruments) <= MAX_INSTRUMENTS:
            self.report((*path, "instruments"), f"must be an array of 1..{MAX_INSTRUMENTS} instrument ids")
            return
        for index, instrument in enumerate(instruments):
            where = (*path, "instruments", index)
            if type(instrument) is not str:
                self.wrong(where, "an instrument id string", instrument)
            elif (problem := catalog_id_problem(instrument)) is not None:
                self.report(where, problem)
            elif instrument in doc.instruments:
                self.report(where, f"{instrument!r} is listed twice")
            else:
                doc.instruments.append(instrument)

    def parameter(self, name: str, node: object) -> ParameterDecl | None:
        path: Path = ("parameters", name)
        if not is_name(name):
            self.report(path, f"parameter name {name!r} is not ^[a-z][a-z0-9_]{{0,63}}$")
        table = self.table(node, path, _TABLES["parameter"], ("type", "default", "min", "max"))
        self.string(table, path, "description", 1024)
        kind = table.get("type")
        if kind not in ("integer", "decimal"):
            if "type" in table:
                self.report((*path, "type"), f"{kind!r} is not a parameter type; allowed: integer, decimal")
            return None
        texts: dict[str, str] = {}
        for key in ("default", "min", "max"):
            if key not in table:
                continue
            value = table[key]
            if kind == "integer":
                if type(value) is not int:
                    self.wrong((*path, key), 'a TOML integer (type = "integer")', value)
                elif not INT64_MIN <= value <= INT64_MAX:
                    self.report((*path, key), "must fit in signed 64 bit")
                else:
                    texts[key] = str(value)
            elif type(value) is not str or not is_decimal(value):
                if type(value) is str:
                    self.report((*path, key), f"{value!r} is not an exact decimal string")
                else:
                    self.wrong((*path, key), 'a decimal string (type = "decimal")', value)
            else:
                texts[key] = value
        if len(texts) != 3:
            return None
        low, default, high = (exact(texts[k]) for k in ("min", "default", "max"))
        if low > high:
            self.report(path, f"min {texts['min']} > max {texts['max']}")
            return None
        if not low <= default <= high:
            self.report(
                (*path, "default"), f"default {texts['default']} is outside min..max = {texts['min']}..{texts['max']}"
            )
            return None
        return ParameterDecl(name=name, type=kind, default=texts["default"], min=texts["min"], max=texts["max"])

    def feature(self, feature_id: str, node: object, parameters: Collection[str]) -> DeclaredFeature | None:
        path: Path = ("features", feature_id)
        registry = {f.feature_id for f in registry_features()}
        if not is_name(feature_id) or feature_id == "bar":
            self.report(path, f"feature id {feature_id!r} must match ^[a-z][a-z0-9_]{{0,63}}$ and not be 'bar'")
            return None
        if feature_id in registry:
            self.report(
                path,
                f"{feature_id!r} is a default-registry feature: read its keys without "
                "declaring it, or choose another id",
            )
            return None
        if not isinstance(node, dict):
            self.wrong(path, "a table", node)
            return None
        kinds = feature_kinds()
        kind = node.get("kind")
        if kind not in kinds:
            where = (*path, "kind") if "kind" in node else path
            self.report(
                where,
                f"unknown feature kind {kind!r}; known: {', '.join(kinds)}"
                if "kind" in node
                else f"missing 'kind'; known: {', '.join(kinds)}",
            )
            return None
        spec = kinds[str(kind)]
        allowed = (*spec.parameters, *OPTIONAL_PARAMETERS)
        values: dict[str, str] = {}
        for key, value in node.items():
            if key == "kind":
                continue
            if key not in allowed:
                self.report((*path, key), f"{key!r} is not a parameter of {kind}; allowed: {', '.join(allowed)}")
                continue
            text = self.feature_value(value, (*path, key), parameters)
            if text is not None:
                values[key] = text
        missing = [p for p in spec.parameters if p not in node]
        if missing:
            self.report(path, f"kind {kind} needs {', '.join(missing)}")
        ok = not missing and len(values) == len(node) - 1
        return DeclaredFeature(feature_id, spec, values) if ok else None

    def feature_value(self, value: object, path: Path, parameters: Collection[str]) -> str | None:
        """A feature parameter: a TOML integer, exact decimal text or a parameter reference."""
        if type(value) is int:
            return str(value)
        if type(value) is not str:
            self.wrong(path, 'an integer, a decimal string or a "{parameter}" reference', value)
            return None
        name = reference(value)
        if name is None and not is_decimal(value):
            self.report(path, f'{value!r} is neither a decimal nor a "{{parameter}}" reference')
            return None
        if name is not None and name not in parameters:
            self.report(path, f"{value!r} names no declared parameter; declared: {', '.join(parameters) or 'none'}")
            return None
        return value

    def named_tables(self, data: dict[str, Any], name: str, limit: int) -> dict[str, Any]:
        """``[name.<id>]`` tables (any ids; each checked by its reader), at most ``limit``."""
        node = data.get(name, {})
        table = self.table(node, (name,), tuple(node) if isinstance(node, dict) else ())
        if len(table) > limit:
            self.report((name,), f"{len(table)} {name}; at most {limit}")
        return table

    def read(self, data: dict[str, Any]) -> Document | None:
        doc = Document(text=self.text)
        self.floats(data, ())
        self.table(data, (), _TABLES[""], ("strategy", "rules", "sizing"))
        if "strategy" in data:  # its absence is reported once, above
            self.strategy(doc, data["strategy"])
        declared = self.named_tables(data, "parameters", MAX_PARAMETERS)
        parameters: dict[str, ParameterDecl] = {}
        for name, node in declared.items():
            decl = self.parameter(name, node)
            if decl is not None:
                parameters[name] = decl
        doc.parameters = list(parameters.values())
        names = list(declared)  # references to a parameter reported broken are not reported again
        table = self.named_tables(data, "features", MAX_FEATURES)
        for feature_id, node in table.items():
            feature = self.feature(feature_id, node, names)
            if feature is not None:
                doc.features.append(feature)
        broken = [f for f in table if f not in {d.feature_id for d in doc.features}]
        keys = {*BAR_KEYS, *registry_row_keys(), *(f"{f.feature_id}.{o}" for f in doc.features for o in f.kind.outputs)}
        rules = self.table(data.get("rules", {}), ("rules",), _TABLES["rules"])
        for name, node in rules.items():
            if name in RULE_NAMES:
                before = self.errors
                check_condition(node, ("rules", name), 1, keys, names, self.report, broken)
                if self.errors == before:
                    doc.rules[name] = node
        self.directions(doc, rules, data)
        self.sizing(doc, data, names)
        risk = self.table(data.get("risk", {}), ("risk",), _TABLES["risk"])
        for key in ("stop_loss", "take_profit"):
            if key in risk:
                setattr(doc, key, self.decimal_text(risk[key], ("risk", key), names))
        return doc if self.errors == 0 else None

    def sizing(self, doc: Document, data: dict[str, Any], names: list[str]) -> None:
        """``[sizing]``: exactly one of SIZINGS."""
        sizing = self.table(data.get("sizing", {}), ("sizing",), _TABLES["sizing"])
        given = [key for key in SIZINGS if key in sizing]
        if "sizing" in data and len(given) != 1:
            self.report(
                ("sizing",),
                f"[sizing] takes exactly one of {', '.join(SIZINGS)}; "
                + (f"it gives {', '.join(given)}" if given else "it gives none"),
            )
        elif given:
            doc.sizing = (given[0], self.decimal_text(sizing[given[0]], ("sizing", given[0]), names) or "")

    def directions(self, doc: Document, rules: dict[str, Any], data: dict[str, Any]) -> None:
        sides = {"LONG_ONLY": ("long",), "SHORT_ONLY": ("short",), "LONG_SHORT": ("long", "short")}[doc.direction]
        if not any(f"entry_{side}" in rules for side in sides):
            wanted = " or ".join(f"entry_{side}" for side in sides)
            self.report(("rules",), f"no entry rule: a {doc.direction} strategy needs {wanted}")
        for side in ("long", "short"):
            for rule in (f"entry_{side}", f"exit_{side}"):
                if rule in rules and side not in sides:
                    self.report(("rules", rule), f"never used: direction is {doc.direction}", "WARNING")
            if side in sides and f"entry_{side}" in rules and f"exit_{side}" not in rules and "risk" not in data:
                self.report(("rules",), f"no exit_{side} and no [risk]: a {side} position is never closed", "WARNING")


def read_document(entry: str, text: str, diagnostics: list[Diagnostic]) -> Document | None:
    """Parse and check ``text`` (the file ``entry``), appending every problem to
    ``diagnostics``; the document, or None when any problem is an ERROR."""
    deep = nesting_problem(entry, text)
    if deep is not None:
        diagnostics.append(Diagnostic(entry, deep[0], "ERROR", deep[1]))
        return None
    try:
        data = tomllib.loads(text, parse_float=TomlFloat)
    except tomllib.TOMLDecodeError as error:
        line = syntax_line(str(error))
        if line is None and "end of document" in str(error):
            line = max(1, len(text.splitlines()))
        diagnostics.append(Diagnostic(entry, line, "ERROR", f"TOML syntax: {error}"))
        return None
    reason = data_problem(data)  # tables nest through dotted keys and headers too
    if reason is not None:
        diagnostics.append(Diagnostic(entry, None, "ERROR", reason))
        return None
    return _Reader(entry, text, diagnostics).read(data)
