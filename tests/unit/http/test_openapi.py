"""The OpenAPI document in the repo is the one the code describes, route for route."""

from __future__ import annotations

import json
from pathlib import Path

from turnstream.entrypoints.http.openapi import openapi_document, openapi_json

DOC = Path(__file__).parents[3] / "docs" / "openapi.json"


def test_the_document_in_the_repo_is_up_to_date() -> None:
    assert DOC.read_text() == openapi_json()


def test_every_request_schema_names_its_fields() -> None:
    schemas = openapi_document()["components"]["schemas"]
    assert set(schemas["ConstraintsRequest"]["properties"]) >= {
        "space_id", "profile_id", "handle", "for", "asked", "tool", "source",
    }  # fmt: skip
    assert schemas["ResolveRequest"]["properties"]["decision"]["enum"] == [
        "upheld", "overturned", "amended",
    ]  # fmt: skip
    assert json.loads(openapi_json())["openapi"] == "3.1.0"
