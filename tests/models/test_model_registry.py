"""Building models by name, as configuration files do."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from citelab import ConfigError
from citelab.models import (
    MODELS,
    ExtractiveModel,
    FaultRates,
    OpenAIModel,
    PerturbedModel,
    ScriptedModel,
    available_models,
    collect,
    get_model,
    register_model,
)

from ._builders import FEES, system, user


@pytest.fixture
def clean_registry() -> Iterator[None]:
    with MODELS.preserved():
        yield


def test_the_built_in_names_are_listed() -> None:
    assert available_models() == [
        "anthropic:<model>",
        "extractive",
        "judge",
        "openai-completions:<model>",
        "openai:<model>",
        "perturbed",
        "scripted",
    ]


def test_options_reach_the_factory() -> None:
    model = get_model("extractive", max_searches=3)
    assert isinstance(model, ExtractiveModel)
    assert model.max_searches == 3


def test_openai_models_are_named_after_the_prefix() -> None:
    model = get_model("openai:llama-3.1-8b", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, OpenAIModel)
    assert (model.model, model.name) == ("llama-3.1-8b", "openai:llama-3.1-8b")


@pytest.mark.anyio
async def test_scripted_needs_rounds_and_replays_them() -> None:
    with pytest.raises(ConfigError, match="needs rounds"):
        get_model("scripted")
    model = get_model("scripted", rounds=[{"text": "Hello."}])
    assert isinstance(model, ScriptedModel)
    assert (await collect(model.stream([user("hi")]))).text == "Hello."
    with pytest.raises(ConfigError, match="scripted round 1 is not valid"):
        get_model("scripted", rounds=[{"txet": "typo"}])


@pytest.mark.anyio
async def test_perturbed_wraps_a_named_inner_model() -> None:
    model = get_model(
        "perturbed", inner="extractive", rates={"dropped": 1.0}, seed=2, name="faulty"
    )
    assert isinstance(model, PerturbedModel)
    assert model.rates == FaultRates(dropped=1.0)
    assert isinstance(model.inner, ExtractiveModel)
    turn = await collect(model.stream([system(FEES), user("How much are tuition fees?")]))
    assert turn.text == "Tuition fees for master's programmes are 2,400 euros per semester."
    assert model.name == "faulty"


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        (
            "gpt-9",
            {},
            "unknown model 'gpt-9'; known models: anthropic:<model>, extractive, judge, "
            "openai-completions:<model>, openai:<model>",
        ),
        ("extractive", {"max_serches": 2}, "bad options \\['max_serches'\\]"),
        ("extractive", {"max_sentences": 0}, "model 'extractive': ExtractiveModel"),
        ("nope:thing", {}, "unknown model 'nope:thing'"),
        ("openai:", {}, "unknown model 'openai:'"),
    ],
)
def test_bad_specs_and_options_are_config_errors(
    spec: str, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        get_model(spec, **options)


@pytest.mark.usefixtures("clean_registry")
def test_a_registered_factory_is_built_by_name() -> None:
    register_model("quiet", lambda **options: ExtractiveModel(name="quiet", **options))
    assert "quiet" in available_models()
    assert get_model("quiet", max_sentences=1).name == "quiet"
    with pytest.raises(ConfigError, match=r"'quiet' is already registered.*known models: "):
        register_model("quiet", ExtractiveModel)
    register_model("quiet", ExtractiveModel, replace=True)
    assert get_model("quiet").name == "extractive"
    register_model("local", lambda rest, **o: ExtractiveModel(name=f"local:{rest}"), prefix=True)
    assert get_model("local:tiny").name == "local:tiny"


@pytest.mark.parametrize("name", ["", "a:b", " padded"])
def test_a_bad_name_cannot_be_registered(name: str) -> None:
    with pytest.raises(ConfigError, match="must be non-empty, without ':' or surrounding"):
        register_model(name, ExtractiveModel)


@pytest.mark.usefixtures("clean_registry")
def test_a_factory_named_module_attr_is_imported_when_first_built() -> None:
    register_model("named", "citelab.models:ExtractiveModel")
    assert "named" in available_models()
    assert isinstance(get_model("named"), ExtractiveModel)
    with pytest.raises(ConfigError, match="write where it is imported from as module:attr"):
        register_model("unnamed", "citelab.models.ExtractiveModel")


def test_the_judge_model_is_registered_without_importing_the_evaluations() -> None:
    # models sits below evals: the judge model is named there, imported only when built.
    code = (
        "import sys, citelab.models as m; "
        "print(any(n.startswith('citelab.evals') for n in sys.modules)); "
        "print(type(m.get_model('judge')).__module__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "citelab.evals.judges._judge_model"]
