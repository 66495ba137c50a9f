"""OpenAICompletionsModel (OpenAI's non-chat ``/v1/completions``) against the real serve-model
app, over real HTTP on loopback, with the ``openai`` SDK's ``completions`` API."""

from __future__ import annotations

import pytest

from citelab import ModelError
from citelab.models import ScriptedModel, TextDelta, collect, get_model, serve_in_thread
from citelab.models.adapters import OpenAICompletionsModel

from .._builders import RAG_SEARCH, user

ANSWER = "Two years [1].\nA second line [2]."


def _model(base_url: str, **options: object) -> OpenAICompletionsModel:
    return OpenAICompletionsModel("scripted", base_url=base_url, max_retries=0, **options)


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
async def test_the_raw_prompt_is_sent_and_the_answer_is_cut_at_the_stop(streaming: bool) -> None:
    scripted = ScriptedModel([{"text": ANSWER}, {"text": ANSWER}])
    with serve_in_thread(scripted) as server:
        async with _model(server.base_url, stream=streaming, options={"stop": ["\n"]}) as model:
            turn = await collect(model.stream([user("Question: how long?\nAnswer:")], seed=3))
        async with _model(server.base_url, stream=streaming) as model:
            whole = await collect(model.stream([user("again")]))
    assert scripted.seen == [[user("Question: how long?\nAnswer:")], [user("again")]]
    assert turn.text == "Two years [1]."
    assert turn.finish_reason == "stop"
    assert whole.text == ANSWER
    if not streaming:
        assert turn.usage is not None
        assert turn.usage.output_tokens > 0


@pytest.mark.anyio
async def test_the_registry_builds_it_by_spec() -> None:
    scripted = ScriptedModel([{"text": ANSWER}])
    with serve_in_thread(scripted) as server:
        model = get_model("openai-completions:scripted", base_url=server.base_url)
        assert model.name == "openai-completions:scripted"
        deltas = [d async for d in model.stream([user("q")])]
        await model.aclose()  # type: ignore[attr-defined]
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == [ANSWER]


@pytest.mark.anyio
async def test_tools_an_unknown_model_and_a_bad_prompt_are_model_errors() -> None:
    with serve_in_thread(ScriptedModel([{"text": "ok"}])) as server:
        async with _model(server.base_url) as model:
            with pytest.raises(ModelError, match="a completions endpoint takes no tools"):
                await collect(model.stream([user("q")], [RAG_SEARCH]))
        unknown = OpenAICompletionsModel("nope", base_url=server.base_url, max_retries=0)
        async with unknown:
            with pytest.raises(ModelError, match=r"HTTP 404: The model 'nope' does not exist"):
                await collect(unknown.stream([user("q")]))
        async with _model(server.base_url, options={"prompt": ["one", "two"]}) as model:
            with pytest.raises(ModelError, match=r"HTTP 400: prompt: give one prompt, not 2"):
                await collect(model.stream([user("q")]))
