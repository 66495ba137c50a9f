"""The model-call cache's key: citelab's own models key by their code version, vendors don't."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from citelab import InvalidInput
from citelab.evals.runner import CachedModel
from citelab.models import (
    AnthropicModel,
    ExtractiveModel,
    Message,
    ModelDelta,
    OpenAIModel,
    PerturbedModel,
    ScriptedModel,
    ToolSpec,
    collect,
    source_version,
)

MESSAGES: list[Message] = [
    {"role": "system", "content": "Cite your sources."},
    {"role": "user", "content": "Wann schließt die Bewerbung?"},
]
TOOLS: list[ToolSpec] = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]


class CountingExtractive(ExtractiveModel):
    """The extractive model, counting the calls that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelDelta]:
        self.calls += 1
        return super().stream(*args, **kwargs)


class UserModel:
    """A user's model (only what the key reads); ``version`` is what it declares as
    ``code_version``, if anything."""

    def __init__(self, version: object = None, *, as_method: bool = False) -> None:
        self.name = "mine"
        if version is not None:
            if as_method:
                self.code_version = lambda: version
            else:
                self.code_version = version


def _ask(model: CachedModel) -> str:
    return asyncio.run(collect(model.stream(MESSAGES))).text


# Computed with the code of before code versions existed (commit 5f19681): these keys address
# every vendor answer cached so far, and must never change.
PINNED = [
    (
        OpenAIModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1"),
        None,
        "c043ce36f57dcf046121cfb8a995306febffebc8477911d464f90352e7987d1e",
        "36904ae3152c1c2b1224fcbbf3b28721797df5cc2b62cdaa4a3b44279818104f",
    ),
    (
        AnthropicModel("claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key="k"),
        None,
        "97edc53a3c9fb9b23b08c36fb6507ccbe186376491682bfed66dfe786312bf62",
        "88a71d4df073a63fc35737b07fa71db8cece01e9988da61299add9fad2686e34",
    ),
    (  # the runner's namespace: the model's spec and endpoint
        OpenAIModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1"),
        '{"name": "m", "endpoint": "http://127.0.0.1:9/v1"}',
        "24bafe1cf8addad6181439e12627bb006bc627151b8405bff38d0f26dca10173",
        None,
    ),
]


@pytest.mark.parametrize(("model", "namespace", "full", "bare"), PINNED)
def test_vendor_keys_are_the_ones_of_before(
    model: OpenAIModel | AnthropicModel, namespace: str | None, full: str, bare: str | None
) -> None:
    cached = CachedModel(model, "unused", namespace)
    assert cached.code_version is None
    assert cached.key(MESSAGES, TOOLS, "auto", 7) == full
    if bare is not None:
        assert cached.key(MESSAGES, None, None, None) == bare


def test_a_user_model_without_a_version_keeps_the_key_of_before() -> None:
    # The extractive model's key of before, computed under its name: a user model declaring
    # nothing, with the same name, gets exactly that key.
    model = UserModel()
    model.name = "extractive"
    cached = CachedModel(model, "unused")
    assert cached.key(MESSAGES, TOOLS, "auto", 7) == (
        "9cabb81fb292f126f65e2814b7c1e8806a0aa69d3bd72345edb36a8883352be2"
    )
    versioned = CachedModel(ExtractiveModel(), "unused")
    assert versioned.code_version == source_version("citelab.models.offline._extractive")
    assert versioned.key(MESSAGES, TOOLS, "auto", 7) != cached.key(MESSAGES, TOOLS, "auto", 7)


def test_an_offline_answer_is_replayed_only_while_its_code_version_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = CountingExtractive()
    answer = _ask(CachedModel(first, tmp_path))
    assert first.calls == 1

    same = CountingExtractive()
    replaying = CachedModel(same, tmp_path)
    assert _ask(replaying) == answer
    assert (same.calls, replaying.hits, replaying.misses) == (0, 1, 0)

    monkeypatch.setattr(ExtractiveModel, "code_version", "changed-code")
    changed = CountingExtractive()
    asking = CachedModel(changed, tmp_path)
    assert asking.code_version == "changed-code"
    assert _ask(asking) == answer  # the same code really, asked again all the same
    assert (changed.calls, asking.hits, asking.misses) == (1, 0, 1)

    again = CountingExtractive()
    replaying_new = CachedModel(again, tmp_path)
    _ask(replaying_new)
    assert (again.calls, replaying_new.hits) == (0, 1)  # the new version's answer is kept


@pytest.mark.parametrize("as_method", [False, True])
def test_a_user_model_may_declare_its_version(tmp_path: Path, as_method: bool) -> None:
    cached = CachedModel(UserModel("v1", as_method=as_method), tmp_path)
    assert cached.code_version == "v1"
    other = CachedModel(UserModel("v2", as_method=as_method), tmp_path)
    assert other.key(MESSAGES, None, None, None) != cached.key(MESSAGES, None, None, None)
    assert CachedModel(UserModel("v1"), tmp_path).key(MESSAGES, None, None, None) == (
        cached.key(MESSAGES, None, None, None)
    )


@pytest.mark.parametrize("version", ["", 3, b"v1"])
def test_a_bad_declared_version_is_refused_naming_the_model(
    tmp_path: Path, version: object
) -> None:
    with pytest.raises(InvalidInput, match=r"model 'mine': code_version must be a non-empty"):
        CachedModel(UserModel(version), tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_citelab_offline_models_declare_versions_and_the_perturbed_one_adds_its_inner() -> None:
    extractive = ExtractiveModel().code_version
    scripted = ScriptedModel([{"text": "Hi."}]).code_version
    own = source_version("citelab.models.offline._perturbed")
    assert len({extractive, scripted, own}) == 3
    assert PerturbedModel(ExtractiveModel(), {}).code_version == f"{own}+{extractive}"
    # Over a model without a version (a vendor), the faults are still citelab's code.
    assert PerturbedModel(UserModel(), {}).code_version == own


def _always_yes(statement: str, evidence: str) -> bool:
    return True


def test_the_offline_judge_model_keys_by_its_judge_code_and_a_users_judge_like_a_vendor(
    tmp_path: Path,
) -> None:
    from citelab.evals.judges import JudgeModel

    lexical = JudgeModel()
    assert lexical.code_version == source_version(
        "citelab.evals.judges._judge_model", type(lexical.judge).__module__
    )
    assert CachedModel(lexical, tmp_path).code_version == lexical.code_version
    # A judge imported as module:attr is the user's code: no version, the key of before.
    users = JudgeModel(f"{__name__}:_always_yes")
    assert users.code_version is None
    undeclared = UserModel()
    undeclared.name = users.name
    assert CachedModel(users, tmp_path).key(MESSAGES, None, None, None) == CachedModel(
        undeclared, tmp_path
    ).key(MESSAGES, None, None, None)
