"""Property tests: ``ScreenTable.screen`` equals an independent polars reference.

Random rows (small mantissas, so ties are common; ABSENT values; rows replaced and removed)
and random definitions (nested all/any up to depth 4, every operator, literals with more
fractional digits than the key's scale, 0..4 sort keys, scopes by resolution and instrument)
are evaluated by Spine and by polars doing the same filter, sort and head: ABSENT is null
(a comparison with it is false), nulls sort last in either direction, and ties order by
instrument_id then resolution by duration. A literal ``v / 10^d`` is compared with a mantissa
``m`` at scale ``s`` by exact cross-multiplication, ``m * 10^d`` against ``v * 10^s``.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from spine import ScreenTable, canonical_json

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
KEYS = (("rsi_14.value", 2), ("trend_200.sign", 0), ("vol_z_20.value", 4), ("ts_1.at", 1))
INSTRUMENTS = ("BTC.BINANCE", "ETH.BINANCE", "AAPL.XNAS", "aapl.XNAS", "A-B.X", "AB.X")
OPS = ("LT", "LE", "GT", "GE", "EQ", "NE")


def text(v: int, digits: int) -> str:
    """``v / 10^digits`` as a decimal string."""
    if digits == 0:
        return str(v)
    sign = "-" if v < 0 else ""
    body = str(abs(v)).rjust(digits + 1, "0")
    return f"{sign}{body[:-digits]}.{body[-digits:]}"


def wire(mantissa: int | None, key: str, scale: int) -> dict[str, Any]:
    """A value as ``FeatureUniverse.row`` shapes it."""
    if mantissa is None:
        return {"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 1, "bars_needed": 2}
    if key == "trend_200.sign":
        return {"kind": "INTEGER", "value": str(mantissa)}
    return {"kind": "DECIMAL", "value": text(mantissa, scale), "scale": scale}


mantissas = st.one_of(st.none(), st.integers(-40, 40))


@st.composite
def literal(draw: st.DrawFn, scale: int) -> str:
    """A literal near the key's values: at fewer, as many or more digits than its scale."""
    base = draw(st.integers(-45, 45))
    digits = draw(st.integers(0, scale + 3))
    v = base * 10**digits // 10**scale + draw(st.sampled_from([0, 0, 0, -1, 1, 7]))
    return text(v, digits)


def exact(literal_text: str) -> Fraction:
    return Fraction(literal_text)


@st.composite
def leaves(draw: st.DrawFn) -> dict[str, Any]:
    key, scale = draw(st.sampled_from(KEYS))
    kind = draw(st.sampled_from(["compare", "compare", "between", "absent"]))
    if kind == "absent":
        return {"key": key, "op": draw(st.sampled_from(["IS_ABSENT", "IS_NOT_ABSENT"]))}
    if kind == "compare":
        return {"key": key, "op": draw(st.sampled_from(OPS)), "value": draw(literal(scale))}
    low, high = sorted([draw(literal(scale)), draw(literal(scale))], key=exact)
    return {"key": key, "op": "BETWEEN", "low": low, "high": high}


def conditions(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    if depth == 4:
        return leaves()
    group = st.builds(
        lambda name, members: {name: members},
        st.sampled_from(["all", "any"]),
        st.lists(st.deferred(lambda: conditions(depth + 1)), min_size=1, max_size=3),
    )
    return st.one_of(leaves(), group)


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    sort_keys = draw(st.lists(st.sampled_from([k for k, _ in KEYS]), max_size=4, unique=True))
    return {
        "version": "spine.v2",
        "schema_id": "svc.screen_definition",
        "schema_version": 1,
        "resolutions": draw(st.lists(st.sampled_from(RESOLUTIONS), min_size=1, max_size=7, unique=True)),
        "instrument_ids": draw(
            st.one_of(
                st.none(), st.lists(st.sampled_from(INSTRUMENTS + ("ZZZ.X",)), min_size=1, max_size=4, unique=True)
            )
        ),
        "filter": draw(st.one_of(st.none(), conditions(1))),
        "sort": [{"key": k, "direction": draw(st.sampled_from(["ASC", "DESC"]))} for k in sort_keys],
        "limit": draw(st.integers(1, 12)),
        "as_of": None,
    }


Row = tuple[str, str, tuple[int | None, ...]]
rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(INSTRUMENTS), st.sampled_from(RESOLUTIONS), st.tuples(*(mantissas for _ in KEYS)), st.booleans()
    ),
    min_size=1,
    max_size=60,
)


def leaf_expr(c: dict[str, Any]) -> pl.Expr:
    key = c["key"]
    scale = dict(KEYS)[key]
    col = pl.col(key)
    if c["op"] == "IS_ABSENT":
        return col.is_null()
    if c["op"] == "IS_NOT_ABSENT":
        return col.is_not_null()

    def scaled(literal: str) -> tuple[pl.Expr, int]:
        """``(m * 10^d, v * 10^s)`` for the literal ``v / 10^d``."""
        digits = len(literal.partition(".")[2])
        return col * 10**digits, int(literal.replace(".", "")) * 10**scale

    if c["op"] == "BETWEEN":
        lo_left, lo = scaled(c["low"])
        hi_left, hi = scaled(c["high"])
        expr = (lo_left >= lo) & (hi_left <= hi)
    else:
        left, right = scaled(c["value"])
        expr = {
            "LT": left < right,
            "LE": left <= right,
            "GT": left > right,
            "GE": left >= right,
            "EQ": left == right,
            "NE": left != right,
        }[c["op"]]
    return expr.fill_null(False)


def filter_expr(c: dict[str, Any]) -> pl.Expr:
    if "all" in c:
        return pl.all_horizontal([filter_expr(m) for m in c["all"]])
    if "any" in c:
        return pl.any_horizontal([filter_expr(m) for m in c["any"]])
    return leaf_expr(c)


def reference(
    rows: dict[tuple[str, str], tuple[int | None, ...]], d: dict[str, Any]
) -> tuple[list[tuple[str, str, int]], int, int]:
    frame = pl.DataFrame(
        {
            "instrument_id": [i for i, _ in rows],
            "resolution": [r for _, r in rows],
            "duration": [RESOLUTIONS.index(r) for _, r in rows],
            **{k: [v[n] for v in rows.values()] for n, (k, _) in enumerate(KEYS)},
        },
        schema={
            "instrument_id": pl.String,
            "resolution": pl.String,
            "duration": pl.Int64,
            **{k: pl.Int64 for k, _ in KEYS},
        },
    )
    scope = frame.filter(pl.col("resolution").is_in(d["resolutions"]))
    if d["instrument_ids"] is not None:
        scope = scope.filter(pl.col("instrument_id").is_in(d["instrument_ids"]))
    matched = scope if d["filter"] is None else scope.filter(filter_expr(d["filter"]))
    by = [s["key"] for s in d["sort"]] + ["instrument_id", "duration"]
    descending = [s["direction"] == "DESC" for s in d["sort"]] + [False, False]
    ranked = matched.sort(by, descending=descending, nulls_last=True).head(d["limit"])
    out = [(i, r, n + 1) for n, (i, r) in enumerate(ranked.select("instrument_id", "resolution").iter_rows())]
    return out, scope.height, matched.height


@given(rows_strategy, definitions(), st.sampled_from(["dict", "bytes", "str"]))
def test_screen_equals_the_polars_reference(
    updates: list[tuple[str, str, tuple[int | None, ...], bool]], definition: dict[str, Any], form: str
) -> None:
    table = ScreenTable(list(KEYS))
    held: dict[tuple[str, str], tuple[int | None, ...]] = {}
    for instrument_id, resolution, values, retire in updates:
        if retire and (instrument_id, resolution) in held:
            assert table.remove(instrument_id, resolution)
            del held[(instrument_id, resolution)]
            continue
        table.upsert(instrument_id, resolution, {k: wire(v, k, s) for (k, s), v in zip(KEYS, values, strict=True)})
        held[(instrument_id, resolution)] = values
    assert len(table) == len(held)
    given_as: Any = {"dict": definition, "bytes": canonical_json(definition), "str": json.dumps(definition)}[form]
    assert table.screen(given_as) == reference(held, definition)
