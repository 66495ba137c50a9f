from __future__ import annotations

from pathlib import Path

import pytest

from citelab import ConfigError
from citelab.agent import AgentConfig, default_agents, load_agents, resolve_corpus_path
from citelab.sources import RetrievalSettings


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_agents_cover_every_fixture_corpus() -> None:
    agents = default_agents()
    assert set(agents) == {"default", "university", "helpcentre", "intranet"}
    for name, agent in agents.items():
        assert agent.name == name
        assert agent.model == "extractive"
        assert agent.retrieval is not None
        assert resolve_corpus_path(agent.corpus).is_file()
    assert agents["university"].source_tools[0].name == "science_programmes"


def test_toml_agents_load_with_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "agents.toml",
        """
[agents.lab]
prompt = "Lab assistant."
corpus = "helpcentre"
merge_strategy = "replace"
hooks = { tool_rewrite = false }

[agents.lab.retrieval]
max_results = 3
""",
    )
    lab = load_agents(path)["lab"]
    assert lab.prompt == "Lab assistant."
    assert lab.merge_strategy == "replace"
    assert lab.hooks.tool_rewrite is False
    assert lab.hooks.system_prompt is True
    assert lab.retrieval == RetrievalSettings(max_results=3)
    assert lab.max_rounds == 4


def test_yaml_agents_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "agents.yaml",
        "agents:\n  lab:\n    corpus: intranet\n    feedback_enabled: false\n",
    )
    lab = load_agents(path)["lab"]
    assert lab.corpus == "intranet"
    assert lab.feedback_enabled is False


def test_retrieval_false_leaves_it_unresolved(tmp_path: Path) -> None:
    path = write(tmp_path, "a.toml", "[agents.bare]\nretrieval = false\n")
    assert load_agents(path)["bare"].retrieval is None


def test_relative_corpus_paths_resolve_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    path = write(tmp_path / "conf", "a.toml", '[agents.x]\ncorpus = "../data/mine.jsonl"\n')
    corpus = load_agents(path)["x"].corpus
    assert Path(corpus) == (tmp_path / "data" / "mine.jsonl").resolve()
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_corpus_path(corpus)


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("[agents.x.retrieval]\nmax_results = 0\n", "agents.x.retrieval.max_results", "greater"),
        ("[agents.x]\nmodle = 'extractive'\n", "agents.x.modle", "Extra inputs"),
        ("[agents.x]\nmerge_strategy = 'mix'\n", "agents.x.merge_strategy", "'merge' or 'replace'"),
        ("[agents.x]\ncontract_template = 'nope'\n", "agents.x.contract_template", "unknown"),
        ("[agents.x]\nmax_rounds = 0\n", "agents.x.max_rounds", "greater"),
        ('[agents."bad name"]\n', "agents.bad name.name", "pattern"),
    ],
)
def test_errors_name_the_file_and_the_key(
    tmp_path: Path, text: str, key: str, message: str
) -> None:
    path = write(tmp_path, "agents.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_agents(path)
    assert f"{path}: {key}:" in str(caught.value)
    assert message in str(caught.value)


def test_duplicate_tool_names_are_refused(tmp_path: Path) -> None:
    tool = "[[agents.x.source_tools]]\nname = 'rag_search'\ndescription = 'clash'\n"
    path = write(tmp_path, "agents.toml", tool)
    with pytest.raises(ConfigError, match=r"agents\.x: .*unique and not rag_search"):
        load_agents(path)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("broken.toml", "[agents.x\n", "invalid TOML"),
        ("broken.yaml", "agents: [unclosed\n", "invalid YAML"),
        ("list.yaml", "- a\n- b\n", "must hold a mapping"),
        ("agents.json", "{}", "must be .toml, .yaml or .yml"),
        ("empty.toml", "", "key 'agents' must be a table"),
        ("extra.toml", "[agents.x]\n[other]\n", "unknown top-level key(s) ['other']"),
        ("scalar.toml", "agents = { x = 3 }\n", "agents.x must be a table"),
        ("named.toml", "[agents.x]\nname = 'y'\n", "agents.x.name is 'y'"),
    ],
)
def test_file_level_errors_name_the_file(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as caught:
        load_agents(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read agent configuration"):
        load_agents(tmp_path / "absent.toml")


def test_unknown_fixture_corpus_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown fixture corpus 'atlantis'.*university"):
        resolve_corpus_path("atlantis")


def test_config_is_immutable_and_strict() -> None:
    agent = AgentConfig(name="x")
    with pytest.raises(ValueError, match="frozen"):
        agent.prompt = "changed"  # type: ignore[misc]
    with pytest.raises(ValueError, match="Extra inputs"):
        AgentConfig(name="x", colour="blue")  # type: ignore[call-arg]
