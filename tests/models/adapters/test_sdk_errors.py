"""The error mapping both SDK adapters share, over real HTTP with each real SDK.

A tiny app answers the OpenAI and the Anthropic route alike with what each test sets (a
status, ``Retry-After``, a pause) and counts the requests, so retries are counted too.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from citelab import ModelError, ModelTimeout, ModelUnavailable
from citelab.models import AnthropicModel, OpenAIModel, RunningServer, collect
from citelab.models.adapters._remote import SDKModel
from citelab.models.serve._server import serve_app_in_thread

from .._builders import user

pytestmark = pytest.mark.anyio


@dataclass
class Failure:
    """How the next requests fail."""

    status: int = 500
    retry_after: str | None = None
    pause: float = 0.0
    requests: int = 0


def _failing_app() -> Starlette:
    async def answer(request: Request) -> Response:
        failure: Failure = request.app.state.failure
        failure.requests += 1
        await asyncio.sleep(failure.pause)
        headers = {"retry-after": failure.retry_after} if failure.retry_after else {}
        # The error body both vendors send: {"error": {"message": ...}}.
        body = {"type": "error", "error": {"type": "test", "message": f"said {failure.status}"}}
        return JSONResponse(body, status_code=failure.status, headers=headers)

    routes = [
        Route(path, answer, methods=["POST"]) for path in ("/v1/chat/completions", "/v1/messages")
    ]
    app = Starlette(routes=routes)
    app.state.failure = Failure()
    return app


APP = _failing_app()


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_app_in_thread(APP) as running:
        yield running


def _adapter(kind: str, base_url: str, **settings: object) -> SDKModel:
    if kind == "openai":
        return OpenAIModel("m", base_url=base_url, **settings)  # type: ignore[arg-type]
    return AnthropicModel("m", base_url=base_url.removesuffix("/v1"), **settings)  # type: ignore[arg-type]


ADAPTERS = pytest.mark.parametrize("kind", ["openai", "anthropic"])


async def _fail(
    server: RunningServer, kind: str, failure: Failure, **settings: object
) -> Exception:
    APP.state.failure = failure
    async with _adapter(kind, server.base_url, **settings) as model:
        with pytest.raises(ModelError) as raised:
            await collect(model.stream([user("q")]))
    return raised.value


@ADAPTERS
@pytest.mark.parametrize("status", [429, 503])
async def test_busy_is_unavailable_with_retry_after_once_the_retries_are_spent(
    server: RunningServer, kind: str, status: int
) -> None:
    failure = Failure(status=status, retry_after="0.1")
    error = await _fail(server, kind, failure, max_retries=2)
    assert type(error) is ModelUnavailable
    assert error.retry_after == 0.1
    assert f"answered HTTP {status}: said {status}" in str(error)
    assert failure.requests == 3  # the first try and two retries


@ADAPTERS
async def test_a_server_error_is_retried_then_a_model_error(
    server: RunningServer, kind: str
) -> None:
    failure = Failure(status=500, retry_after="0.05")
    error = await _fail(server, kind, failure, max_retries=1)
    assert type(error) is ModelError
    assert error.retry_after is None
    assert "HTTP 500: said 500" in str(error)
    assert failure.requests == 2


@ADAPTERS
async def test_a_bad_request_is_not_retried(server: RunningServer, kind: str) -> None:
    failure = Failure(status=400)
    error = await _fail(server, kind, failure, max_retries=2)
    assert type(error) is ModelError
    assert failure.requests == 1


@ADAPTERS
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_no_answer_in_time_is_a_model_timeout(
    server: RunningServer, kind: str, streaming: bool
) -> None:
    failure = Failure(status=200, pause=1.0)
    error = await _fail(server, kind, failure, max_retries=0, timeout=0.2, stream=streaming)
    assert type(error) is ModelTimeout
    assert "within 0.2 s" in str(error)


@ADAPTERS
async def test_an_unreachable_endpoint_is_unavailable(kind: str) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with _adapter(kind, f"http://127.0.0.1:{port}/v1", max_retries=0) as model:
        with pytest.raises(ModelUnavailable, match=f"cannot reach http://127.0.0.1:{port}"):
            await collect(model.stream([user("q")]))
        with pytest.raises(ModelUnavailable, match="cannot reach"):
            await model.check_available()
