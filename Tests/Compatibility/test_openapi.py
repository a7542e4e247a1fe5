"""docs/openapi.json is a valid OpenAPI 3.1 document (the response shapes are checked on every call
the other tests make, see conftest.OpenAPIChecker)."""

import json

from openapi_spec_validator import validate

from conftest import ROOT


def test_the_document_is_valid_openapi_3_1():
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_every_documented_operation_names_its_errors_with_the_error_schema():
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    for template, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")) and "content" in response and "application/json" in response["content"]:
                    assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (method, template, status)


def test_responses_were_checked(openapi, client):
    # Runs last in this file's order; the hook has checked the calls of earlier test files.
    client.list_channel_types()
    assert openapi.checked > 0
