"""Shared fixtures for the contract tests: the example message and the XSS vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citelab.contract import AnswerMessage, build_message

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="session")
def example_fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "messages" / "example.json").read_text())
    return data


@pytest.fixture
def example_message(example_fixture: dict[str, Any]) -> AnswerMessage:
    return build_message(
        example_fixture["answer"],
        example_fixture["sources"],
        anchors=example_fixture["anchors"],
        suggested_replies=example_fixture["suggested_replies"],
    )


@pytest.fixture
def example_wire(example_message: AnswerMessage) -> dict[str, Any]:
    return example_message.to_wire()


@pytest.fixture(scope="session")
def xss_vectors() -> list[str]:
    vectors: list[str] = json.loads((FIXTURES / "xss_vectors.json").read_text())["vectors"]
    return vectors
