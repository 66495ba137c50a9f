"""A bounded schemathesis run against the live server: the OpenAPI document says what the
server does (statuses, content types, headers, bodies), for valid and invalid requests.

schemathesis drives hypothesis here directly (its pytest plugin does not run on this
pytest); every operation gets ``EXAMPLES`` positive and as many negative cases."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from .conftest import Live

EXAMPLES = 25


def operations(live: Live) -> list[Any]:
    document = httpx.get(f"{live.url}/api/openapi.json").json()
    loaded = schemathesis.openapi.from_dict(document)
    return [result.ok() for result in loaded.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_server_behaves_as_its_openapi_document_says(live: Live, mode: GenerationMode) -> None:
    headers = {"Authorization": f"Bearer {live.token('alice')}"}
    ran = []
    for operation in operations(live):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            case.call_and_validate(base_url=live.url, headers=headers)

        try:
            check()
        except Unsatisfiable:
            # No request can break this operation's schema (no body; any query string).
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        ran.append(operation.label)
    expected = {"POST /api/feedback", "POST /api/question"}
    if mode is GenerationMode.POSITIVE:
        expected |= {"GET /", "GET /api/openapi.json", "GET /api/conversations"}
    expected |= {"GET /api/conversations/{conversation_id}"}
    assert expected <= set(ran)
