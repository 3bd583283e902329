"""Regenerate ``tests/data/canonical_json.json`` from the plain-Python reference.

    python tests/reference/make_vectors.py           # rewrite the vector file
    python tests/reference/make_vectors.py --check   # exit 1 if the file is stale

The output is deterministic (no clock, seeded shuffles), so the committed file must equal what
this script produces now; ``tests/unit/test_canonical_vectors.py`` checks that.

Vector file layout (all strings are UTF-8 JSON; ``*_hex`` fields are authoritative bytes):

* ``cases``: accepted inputs. ``input`` is JSON text (canonicalised as str and as UTF-8
  bytes; ``json.loads(input)`` must give the same bytes through ``canonical_json``), or
  ``value`` is a tagged Python value (see ``python_values.py``) described by ``python``.
  ``canonical`` / ``canonical_hex`` are the canonical bytes; ``identities`` maps identity
  names to their lowercase hex identity.
* ``refusals``: refused inputs, as ``input`` (str and bytes), ``input_hex`` (bytes only),
  ``input_codepoints`` (a str that cannot be UTF-8, str only) or ``value``; ``symbol`` and
  ``path`` are the expected error. A ``null`` path is not pinned (syntax errors).
* ``identity_names`` / ``identity_name_refusals``: the name rule of pinned decision 3.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``reference`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference import canonical_json as ref  # noqa: E402
from reference.python_values import build  # noqa: E402

VECTOR_FILE = Path(__file__).resolve().parent.parent / "data" / "canonical_json.json"
IDENTITY_NAMES = ("config_hash", "bar_fingerprint", "event_id")
C0 = [chr(code) for code in range(0x20)]


def _u(text: str) -> str:
    """``text`` as a JSON string literal with every non-ASCII or control char \\u-escaped."""
    return json.dumps(text, ensure_ascii=True)


def _nest_text(depth: int, opener: str, closer: str, leaf: str = "") -> str:
    return opener * depth + leaf + closer * depth


# accepted


def _text_cases() -> list[tuple[str, str]]:
    shuffled = [f"feat_{n:03d}_value" for n in range(100)]
    random.Random(20240601).shuffle(shuffled)
    mixed_deep = "".join('[{"k":' if level % 2 else "[" for level in range(64))
    mixed_deep_close = "".join("}]" if level % 2 else "]" for level in reversed(range(64)))
    return [
        ("empty_object", "{}"),
        ("empty_array", "[]"),
        ("root_null", "null"),
        ("root_true", "true"),
        ("root_false", "false"),
        ("root_zero", "0"),
        ("root_empty_string", '""'),
        ("whitespace_is_dropped", ' \t\n\r{ "b" : [ 1 , 2 ] ,\n "a" : null } \r\n'),
        (
            "nested_config_document",
            '{"warmup":{"bars":14,"unit":"bars"},"feature_id":"rsi","feature_version":"1.0.0",'
            '"parameters":{"period":"14","source":"close"},"outputs":[{"name":"value",'
            '"scale":6,"type":"DECIMAL"}],"enabled":true,"threshold":null}',
        ),
        (
            "feature_row_document",
            '{"version":"spine.v2","instrument":"BTCUSDT.SIM","resolution":"1h",'
            '"values":{"sma_20.value":{"type":"DECIMAL","value":"64123.500000"},'
            '"rsi_14.value":{"type":"ABSENT","reason":"WARMING_UP","bars_seen":3,'
            '"bars_needed":15},"ts_event.value":{"type":"UNIX_NANOS",'
            '"value":"1700000000000000000"}}}',
        ),
        (
            "key_order_ascii",
            '{"b":1,"a":2,"c":3,"A":4,"_":5,"aa":6,"":7,"0":8,"~":9," ":10,"Z":11}',
        ),
        (
            "key_order_prefixes",
            '{"abc":1,"ab":2,"a":3,"abd":4,"abcdefghi":5,"abcdefgh":6,"abcdefgi":7}',
        ),
        ("key_order_code_point_not_utf16", '{"\U0001f600":1,"\uff61":2}'),
        ("key_order_code_point_not_utf16_escaped", '{"\\ud83d\\ude00":1,"\\uff61":2}'),
        (
            "key_order_private_use_vs_astral",
            '{"\U00010000":1,"\ue000":2,"\uffff":3,"\ud7ff":4,"\U0010ffff":5,"\ufb01":6}',
        ),
        (
            "key_order_utf8_lengths",
            '{"\\u007f":1,"\u0080":2,"\u07ff":3,"\u0800":4,"~":5,"z":6,"\u00ff":7}',
        ),
        ("key_order_controls", '{"a":1," ":2,"\\t":3,"\\u001f":4,"\\u0000":5}'),
        (
            "key_order_nested",
            '{"z":{"y":[{"b":1,"a":2}],"x":{"d":{"f":0,"e":0},"c":0}},"m":[{"q":1,"p":2}]}',
        ),
        (
            "keys_need_escaping",
            '{"a\\"b":1,"c\\\\d":2,"\\n":3,"\\u0001":4,"/":5,"\\u2028":6,"\\u007f":7}',
        ),
        ("unicode_normalization_is_not_applied", '{"\u00e9":1,"e\u0301":2}'),
        ("array_order_is_kept", '[3,1,2,[2,1],{"b":0,"a":0}]'),
        ("all_scalar_types", '[null,true,false,0,-1,"s",[],{}]'),
        ("every_c0_control_in_one_string", _u("".join(C0))),
        ("every_c0_control_one_per_element", json.dumps(C0)),
        ("short_escapes_from_long_form", '"\\u0008\\u000c\\u000a\\u000d\\u0009"'),
        ("long_escapes_are_lowercase", '"\\u000B\\u001F\\u001A\\u000E"'),
        ("del_u007f_escaped_input_is_raw", '"\\u007f"'),
        ("del_u007f_raw_input", '"a\x7fb"'),
        ("line_separators_are_raw", '"\\u2028\\u2029"'),
        ("line_separators_raw_input", '["\u2028","\u2029"]'),
        ("slash_is_raw", '["\\/a\\/b","/c"]'),
        ("quote_and_backslash", '"\\"\\\\\\"\\\\"'),
        ("non_ascii_bmp_escaped_input", '"\\u00e9\\u4e2d\\u6587\\u00A0"'),
        ("non_ascii_bmp_raw_input", '"\u00e9\u4e2d\u6587\u00a0"'),
        ("astral_from_surrogate_pair_escape", '"\\ud83d\\ude00\\uD834\\uDD1E"'),
        ("astral_raw_input", '"\U0001f600\U0001d11e"'),
        ("astral_extremes", '["\\ud800\\udc00","\\udbff\\udfff"]'),
        ("noncharacters_and_bom_inside_string", '"\\ufffe\\uffff\\ufeff\ufeff"'),
        ("nul_in_key_and_value", '{"\\u0000":"\\u0000"}'),
        ("int64_max", "9223372036854775807"),
        ("int64_min", "-9223372036854775808"),
        (
            "int64_extremes_in_array",
            "[-9223372036854775808,9223372036854775807,-9223372036854775807,9223372036854775806]",
        ),
        ("negative_zero_integer", "-0"),
        ("negative_zero_integer_in_array", "[-0,0,-1]"),
        ("integer_forms", "[0,1,-1,10,100000,1234567890123]"),
        ("deep_arrays_at_limit", _nest_text(128, "[", "]")),
        ("deep_objects_at_limit", _nest_text(127, '{"a":', "}", "{}")),
        ("deep_mixed_at_limit", mixed_deep + "0" + mixed_deep_close),
        ("deep_arrays_at_limit_with_leaf", _nest_text(128, "[", "]", '"\U0001f600"')),
        (
            "escape_positions_around_eight_bytes",
            '["abcdefg\\"","abcdefgh\\\\","abcdefghi\\n","\\u0000abcdefghijklmno",'
            '"abcdefghijklmnopq\\u001f","abcdefgh\u00e9\\t"]',
        ),
        (
            "many_keys_shuffled",
            "{" + ",".join(f'"{key}":{n}' for n, key in enumerate(shuffled)) + "}",
        ),
        ("escaped_key_spelling_is_irrelevant", '{"\\u0062":1,"a":2,"\\u00e9":3}'),
        ("empty_key_and_empty_containers", '{"":{},"x":[],"y":[[]],"z":[{}]}'),
    ]


def _value_cases() -> list[tuple[str, Any, str]]:
    return [
        ("tuple_is_array", {"$tuple": [1, 2, {"$tuple": []}]}, "tuple(1, 2, ())"),
        (
            "tuples_and_lists_mix",
            [{"$tuple": ["a", [{"$tuple": [None, True]}]]}],
            "[('a', [(None, True)])]",
        ),
        ("int_enum_is_its_value", {"level": {"$int_enum": 5}}, "{'level': IntEnum member = 5}"),
        (
            "int_subclass_at_int64_max",
            {"$int_subclass": 9223372036854775807},
            "class IntSub(int); IntSub(2**63 - 1)",
        ),
        (
            "str_subclass_key_and_value",
            {"$dict": [[{"$str_subclass": "b"}, {"$str_subclass": "x\n"}], ["a", 1]]},
            "{StrSub('b'): StrSub('x\\n'), 'a': 1}",
        ),
        (
            "ordered_dict_order_is_ignored",
            {"$ordered_dict": [["z", 1], ["a", 2], ["\U0001f600", 3], ["\uff61", 4]]},
            "OrderedDict with keys inserted in reverse order",
        ),
        ("list_subclass", {"$list_subclass": [3, 2, 1]}, "class ListSub(list); ListSub([3, 2, 1])"),
        ("bools_are_not_ints", [True, 1, False, 0], "[True, 1, False, 0]"),
        (
            "int64_extremes_as_python_ints",
            {"min": -(2**63), "max": 2**63 - 1},
            "{'min': -2**63, 'max': 2**63 - 1}",
        ),
        (
            "deep_tuples_at_limit",
            {"$nest": {"depth": 128, "kind": "tuple", "leaf": 0}},
            "128 nested 1-tuples around 0",
        ),
        (
            "deep_dicts_at_limit",
            {"$nest": {"depth": 128, "kind": "dict", "leaf": None}},
            "128 nested {'a': ...} around None",
        ),
        (
            "astral_and_bmp_keys_in_a_dict",
            {"\U0001f600": 1, "\uff61": 2, "\ue000": 3, "\U00010000": 4},
            "dict with keys U+1F600, U+FF61, U+E000, U+10000 in that insertion order",
        ),
        (
            "controls_and_separators_in_python_strings",
            {"s": "".join(C0) + '\x7f\u2028\u2029/"\\'},
            "every C0 control, DEL, U+2028, U+2029, '/', '\"', '\\\\'",
        ),
    ]


def _accepted(name: str, canonical: bytes, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        **fields,
        "canonical": canonical.decode("utf-8"),
        "canonical_hex": canonical.hex(),
        "identities": {
            identity_name: ref.identity_of_canonical(identity_name, canonical) for identity_name in IDENTITY_NAMES
        },
    }


def accepted_cases() -> list[dict[str, Any]]:
    cases = []
    for name, text in _text_cases():
        canonical = ref.canonicalize(text)
        if ref.canonicalize(text.encode("utf-8")) != canonical:
            raise AssertionError(f"{name}: str and bytes disagree")
        if ref.canonical_dumps(json.loads(text)) != canonical:
            raise AssertionError(f"{name}: json.loads + canonical_dumps disagrees")
        cases.append(_accepted(name, canonical, input=text))
    for name, tagged, python in _value_cases():
        canonical = ref.canonical_dumps(build(tagged))
        cases.append(_accepted(name, canonical, value=tagged, python=python))
    return cases


# refused


def _text_refusals() -> list[tuple[str, dict[str, Any]]]:
    deep_in_second = "[0," + _nest_text(128, "[", "]") + "]"
    deep_quoted_key = '{"rsi_14.value":' + _nest_text(128, "[", "]") + "}"
    return [
        ("float_fraction", {"input": "1.5"}),
        ("float_integral_value", {"input": "[1.0]"}),
        ("float_exponent", {"input": "1e5"}),
        ("float_exponent_upper_with_sign", {"input": '{"x":1E+2}'}),
        ("float_negative_zero", {"input": "-0.0"}),
        ("float_huge_exponent", {"input": "[0,1e400]"}),
        ("float_nested", {"input": '{"a":{"b":[0,1.5]}}'}),
        ("float_path_quotes_a_dotted_key", {"input": '{"values":{"rsi_14.value":[0,0,2.5]}}'}),
        ("int_just_above_int64_max", {"input": "9223372036854775808"}),
        ("int_just_below_int64_min", {"input": "[-9223372036854775809]"}),
        ("int_huge_nested", {"input": '{"n":[100000000000000000000000000000]}'}),
        ("non_string_key_number", {"input": "{1:2}"}),
        ("non_string_key_literal_nested", {"input": '[0,{"a":{true:1}}]'}),
        ("non_string_key_after_comma", {"input": '{"a":1,null:2}'}),
        ("non_string_key_array", {"input": '{"k":{[]:1}}'}),
        ("duplicate_key", {"input": '{"a":1,"a":2}'}),
        ("duplicate_key_nested", {"input": '{"x":[{"k":1,"k":1}]}'}),
        ("duplicate_key_spelled_with_escape", {"input": '{"a":1,"\\u0061":2}'}),
        ("duplicate_key_needs_quoting", {"input": '{"a b":1,"a b":2}'}),
        ("duplicate_key_not_adjacent", {"input": '{"b":1,"a":1,"b":2}'}),
        ("duplicate_astral_key_raw_and_escaped", {"input": '{"\U0001f600":1,"\\ud83d\\ude00":2}'}),
        ("lone_high_surrogate_root", {"input": '"\\ud800"'}),
        ("lone_low_surrogate_in_array", {"input": '["\\udc00"]'}),
        ("high_surrogate_then_non_surrogate", {"input": '{"k":"\\ud83d\\u0041"}'}),
        ("high_surrogate_at_end_of_string", {"input": '["a","\\ud83d"]'}),
        ("reversed_surrogate_pair", {"input": '"\\ude00\\ud83d"'}),
        ("lone_surrogate_in_key", {"input": '{"\\ud800":1}'}),
        (
            "lone_surrogate_character_in_str_input",
            {"input_codepoints": [ord(c) for c in '["ok","'] + [0xD800] + [ord(c) for c in '"]']},
        ),
        ("invalid_utf8_byte_in_string", {"input_hex": b'"\xff"'.hex()}),
        ("invalid_utf8_truncated_sequence", {"input_hex": b'["\xc3"]'.hex()}),
        ("invalid_utf8_encoded_surrogate", {"input_hex": b'{"k":"\xed\xa0\x80"}'.hex()}),
        ("invalid_utf8_in_key", {"input_hex": b'{"\xff":1}'.hex()}),
        ("invalid_utf8_overlong", {"input_hex": b'"\xc0\xaf"'.hex()}),
        ("invalid_utf8_above_u10ffff", {"input_hex": b'"\xf4\x90\x80\x80"'.hex()}),
        ("invalid_utf8_lone_continuation", {"input_hex": b'["a","\x80"]'.hex()}),
        ("invalid_utf8_outside_strings", {"input_hex": b"\xff".hex()}),
        ("invalid_utf8_outside_strings_nested", {"input_hex": b"[1,\xfe]".hex()}),
        ("invalid_utf8_utf16_text", {"input_hex": "{}".encode("utf-16").hex()}),
        ("too_deep_arrays", {"input": _nest_text(129, "[", "]")}),
        ("too_deep_objects", {"input": _nest_text(128, '{"a":', "}", "{}")}),
        ("too_deep_in_second_element", {"input": deep_in_second}),
        ("too_deep_under_quoted_key", {"input": deep_quoted_key}),
        ("too_deep_unclosed", {"input": "[" * 200}),
        ("syntax_empty", {"input": ""}),
        ("syntax_nan", {"input": "NaN"}),
        ("syntax_infinity_in_array", {"input": "[Infinity]"}),
        ("syntax_trailing_comma_array", {"input": "[1,]"}),
        ("syntax_trailing_comma_object", {"input": '{"a":1,}'}),
        ("syntax_missing_comma", {"input": "[1 2]"}),
        ("syntax_missing_colon", {"input": '{"a" 1}'}),
        ("syntax_leading_zero", {"input": "01"}),
        ("syntax_leading_zero_in_array", {"input": "[-01]"}),
        ("syntax_plus_sign", {"input": "+1"}),
        ("syntax_bare_point", {"input": "[1.]"}),
        ("syntax_truncated_literal", {"input": "tru"}),
        ("syntax_raw_tab_in_string", {"input": '"a\tb"'}),
        ("syntax_raw_nul_in_string", {"input": '"\x00"'}),
        ("syntax_unterminated_string", {"input": '"abc'}),
        ("syntax_unknown_escape", {"input": '"\\x41"'}),
        ("syntax_short_unicode_escape", {"input": '"\\u12"'}),
        ("syntax_trailing_content", {"input": "{} []"}),
        ("syntax_bom_bytes", {"input_hex": b"\xef\xbb\xbf{}".hex()}),
        ("syntax_bom_character", {"input": "\ufeff{}"}),
        ("syntax_nbsp_is_not_whitespace", {"input": "\u00a0{}"}),
    ]


def _value_refusals() -> list[tuple[str, Any]]:
    return [
        ("float_root", {"$float": "1.5"}),
        ("float_in_tuple", {"a": [1, {"$tuple": [2, {"$float": "2.5"}]}]}),
        ("float_nan", {"x": {"$float": "nan"}}),
        ("float_infinity", {"x": {"$float": "-inf"}}),
        ("float_negative_zero", {"$float": "-0.0"}),
        ("float_subclass", {"v": {"$float_subclass": "2.5"}}),
        ("float_path_quotes_a_dotted_key", {"values": {"rsi_14.value": [0, 0, {"$float": "2.5"}]}}),
        ("int_just_above_int64_max", 2**63),
        ("int_just_below_int64_min", {"n": -(2**63) - 1}),
        ("int_huge", [0, 2**200]),
        ("int_enum_above_int64_max", {"level": {"$int_enum": 2**63}}),
        ("non_string_key_int", {"$dict": [[1, "a"]]}),
        ("non_string_key_none_nested", {"a": [{"$dict": [["ok", 1], [None, 1]]}]}),
        ("non_string_key_tuple", {"$dict": [[{"$tuple": [1, 2]}, 0]]}),
        ("non_string_key_float", {"$dict": [[{"$float": "1.5"}, 0]]}),
        ("keys_checked_before_values", {"$dict": [["b", {"$float": "1.5"}], [1, 2]]}),
        ("duplicate_key_from_str_subclass", {"$dict": [["a", 1], [{"$distinct_str": "a"}, 2]]}),
        ("lone_surrogate_root", {"$codepoints": [0xD800]}),
        ("lone_surrogate_nested", {"k": ["ok", {"$codepoints": [0x61, 0xDFFF]}]}),
        ("lone_surrogate_in_key", {"$dict": [[{"$codepoints": [0xD800]}, 1]]}),
        ("lone_surrogate_in_nested_key", {"a": {"$dict": [[{"$codepoints": [0xDC00, 0x78]}, 1]]}}),
        ("too_deep_lists", {"$nest": {"depth": 129, "kind": "list", "leaf": 0}}),
        ("too_deep_dicts", {"$nest": {"depth": 129, "kind": "dict", "leaf": 0}}),
        ("too_deep_tuples_in_dict", {"k": {"$nest": {"depth": 128, "kind": "tuple", "leaf": 0}}}),
        ("unsupported_bytes", {"a": [1, {"$bytes": "78"}]}),
        ("unsupported_decimal", {"price": {"$decimal": "1.50"}}),
        ("unsupported_set", {"$set": [1]}),
        ("unsupported_object", {"o b": {"$object": None}}),
    ]


def _refused(name: str, attempt: Any, **fields: Any) -> dict[str, Any]:
    try:
        attempt()
    except ref.CanonicalRefusal as exc:
        return {"name": name, **fields, "symbol": exc.symbol, "path": exc.path}
    raise AssertionError(f"{name}: the reference accepted a refusal case")


def refused_cases() -> list[dict[str, Any]]:
    cases = []
    for name, source in _text_refusals():
        if "input" in source:
            text = source["input"]
            case = _refused(name, lambda: ref.canonicalize(text), **source)
            bytes_case = _refused(name, lambda: ref.canonicalize(text.encode()), **source)
            if bytes_case != case:
                raise AssertionError(f"{name}: str and bytes refusals differ")
        elif "input_hex" in source:
            data = bytes.fromhex(source["input_hex"])
            case = _refused(name, lambda: ref.canonicalize(data), **source)
        else:
            text = "".join(map(chr, source["input_codepoints"]))
            case = _refused(name, lambda: ref.canonicalize(text), **source)
        cases.append(case)
    for name, tagged in _value_refusals():
        cases.append(_refused(name, lambda: ref.canonical_dumps(build(tagged)), value=tagged))
    return cases


# identity names


def identity_name_cases() -> list[dict[str, str]]:
    names = ["a", "config_hash", "run_id", "a_1_b_2", "z9", "x" * 64, "a_"]
    return [{"name": name, "input": "{}", "identity": ref.identity_of_canonical(name, b"{}")} for name in names]


IDENTITY_NAME_REFUSALS = [
    "",
    "Config_hash",
    "9lives",
    "_config",
    "config-hash",
    "config.hash",
    "config hash",
    "config_hash\n",
    "caf\u00e9",
    "x" * 65,
    "spine.v2/config_hash",
]


# the file


def build_document() -> dict[str, Any]:
    return {
        "about": (
            "Canonical JSON and identity vectors (pinned decisions 2 and 3), generated by "
            "tests/reference/make_vectors.py from the plain-Python reference; do not edit."
        ),
        "max_depth": ref.MAX_DEPTH,
        "identity_names_used": list(IDENTITY_NAMES),
        "cases": accepted_cases(),
        "refusals": refused_cases(),
        "identity_names": identity_name_cases(),
        "identity_name_refusals": IDENTITY_NAME_REFUSALS,
    }


def render() -> str:
    """The exact text of the vector file."""
    return json.dumps(build_document(), ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = VECTOR_FILE.read_text(encoding="utf-8") if VECTOR_FILE.exists() else ""
        if current != text:
            print(f"{VECTOR_FILE} is stale; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    VECTOR_FILE.write_text(text, encoding="utf-8")
    document = json.loads(text)
    print(f"wrote {VECTOR_FILE}: {len(document['cases'])} cases, {len(document['refusals'])} refusals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
