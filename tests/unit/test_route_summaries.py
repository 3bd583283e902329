"""Every operation of the route table has its one-line summary (the OpenAPI summary, and the
description its tool and command will carry), and no summary names an operation the table lacks."""

from __future__ import annotations

from spine.http.openapi import openapi_document
from spine.http.routes import OPERATIONS
from spine.http.summaries import SUMMARIES


def test_each_operation_has_one_summary_and_no_more() -> None:
    ids = [op.id for op in OPERATIONS]
    assert sorted(SUMMARIES) == sorted(ids)
    for op_id, text in SUMMARIES.items():
        assert text.endswith(".") and "\n" not in text and len(text) <= 120, (op_id, text)


def test_the_openapi_document_carries_them() -> None:
    document = openapi_document(OPERATIONS, "gateway")
    for op in OPERATIONS:
        entry = document["paths"][op.path][op.method.lower()]
        assert entry["summary"] == SUMMARIES[op.id], op.id
