import json
from pathlib import Path

import pytest

from citelab import ConfigError
from citelab.evals import load_suite, plan_run
from citelab.evals.runner import resolve_suite_path

DATASET = (
    '{"id": "fee", "agent": "university", '
    '"turns": [{"question": "How much is the semester fee?"}]}\n'
)


def _suite(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    (tmp_path / "cases.jsonl").write_text(DATASET, encoding="utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
name = "small"
datasets = ["cases.jsonl"]
judge = { name = "lexical", threshold = 0.6 }
scorers = ["citation_recall", "no_answer", { name = "citation_precision", alce_compat = true }]

[[variants]]
name = "baseline"

[[variants]]
name = "no_rewrite"
set = { "hooks.tool_rewrite" = false, merge_strategy = "replace" }

[grid]
"retrieval.entity_cap" = [2, 5]
"""


def test_a_suite_resolves_datasets_variants_and_the_grid(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, GOOD))
    assert suite.dataset_paths() == [tmp_path / "cases.jsonl"]
    assert [m.name for m in suite.models] == ["extractive"]
    names = [v.name for v in suite.expanded_variants()]
    assert names == [
        "baseline/retrieval.entity_cap=2",
        "baseline/retrieval.entity_cap=5",
        "no_rewrite/retrieval.entity_cap=2",
        "no_rewrite/retrieval.entity_cap=5",
    ]
    plan = plan_run(suite)
    agents = plan.agents["no_rewrite/retrieval.entity_cap=2"]
    assert agents["university"].hooks.tool_rewrite is False
    assert agents["university"].merge_strategy == "replace"
    assert agents["university"].retrieval is not None
    assert agents["university"].retrieval.entity_cap == 2
    assert len(plan.units) == 4
    # The suite's judge reaches every scorer that takes one, and only those.
    configs = [scorer.config() for scorer in plan.scorers]
    assert configs[0]["judge"] == {"name": "lexical", "threshold": 0.6}
    assert configs[1] == {"name": "no_answer"}
    assert configs[2]["alce_compat"] is True


def test_yaml_suites_and_bundled_names_resolve(tmp_path: Path) -> None:
    path = _suite(tmp_path, "name: y\ndatasets: [cases.jsonl]\nmodels: [extractive]\n", "y.yaml")
    assert load_suite(path).name == "y"
    assert resolve_suite_path("default").name == "default.toml"
    assert load_suite("default").dataset_paths()[0].name == "university.jsonl"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 'x'\ndatasets = [", "not valid TOML"),
        ("name = 'x'\ndatasets = ['cases.jsonl']\ncolour = 1", "key colour: Extra inputs"),
        ("name = 'x'\ndatasets = []", "key datasets: List should have at least 1 item"),
        ("name = 'x'\ndatasets = ['missing.jsonl']", "key datasets.0: 'missing.jsonl'"),
        ("name = 'x'\ndatasets = ['cases.jsonl']\nconcurrency = 0", "key concurrency"),
        (
            "name = 'x'\ndatasets = ['cases.jsonl']\n"
            "[[variants]]\nname = 'a'\n[[variants]]\nname = 'a'",
            "variant names must be unique",
        ),
        (
            "name = 'x'\ndatasets = ['cases.jsonl']\n"
            "[[variants]]\nname = 'a'\nset = {'bad key' = 1}",
            "key variants.0.set",
        ),
        (
            "name = 'x'\ndatasets = ['cases.jsonl']\nmodels = [{spec = 'extractive', limit = 0}]",
            "key models.0.limit: Input should be greater than or equal to 1",
        ),
        (
            "name = 'x'\ndatasets = ['cases.jsonl']\n"
            "models = [{spec = 'extractive', variants = []}]",
            "key models.0.variants: List should have at least 1 item",
        ),
    ],
)
def test_a_bad_suite_names_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = _suite(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ("set = { 'hooks.rewrite' = false }", "key set.hooks.rewrite: no such agent setting"),
        ("set = { 'nothing.here' = 1 }", "nothing is not an agent setting"),
        ("set = { merge_strategy = 'shuffle' }", "rejects the overrides (merge_strategy"),
    ],
)
def test_a_bad_override_names_the_variant_and_the_key(
    tmp_path: Path, variant: str, message: str
) -> None:
    path = _suite(
        tmp_path, f"name = 'x'\ndatasets = ['cases.jsonl']\n[[variants]]\nname = 'v'\n{variant}"
    )
    with pytest.raises(ConfigError) as caught:
        plan_run(load_suite(path))
    assert "variant 'v'" in str(caught.value)
    assert message in str(caught.value)


def test_findings_must_name_known_variants(tmp_path: Path) -> None:
    text = (
        "name = 'x'\ndatasets = ['cases.jsonl']\n[[findings]]\ntitle = 't'\n"
        "metric = 'no_answer'\nbaseline = 'baseline'\nvariant = 'ghost'\n"
    )
    with pytest.raises(ConfigError, match=r"key findings\.0\.variant: no variant named 'ghost'"):
        plan_run(load_suite(_suite(tmp_path, text)))


def test_a_threshold_written_the_old_way_names_the_entry_and_the_new_form(
    tmp_path: Path,
) -> None:
    text = (
        "name = 'x'\ndatasets = ['cases.jsonl']\n"
        "[[findings]]\ntitle = 'fine'\nmetric = 'no_answer'\nvariant = '*'\nmax = 0.0\n"
        "[[findings]]\ntitle = 'old'\nmetric = 'no_answer'\nvariant = '*'\n"
        "expect = 'at_least'\nthreshold = 0.5\n"
        "[[gates]]\ncheck = 'citation_precision >= 0.9'\n"
    )
    path = _suite(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    lines = str(caught.value).splitlines()[1:]
    assert lines == [
        f'{path}: key findings.1: Value error, expect = "at_least" with threshold = 0.5 is no '
        "longer read: write min = 0.5, without expect (expect is for comparisons)",
        f"{path}: key gates.0: Value error, check = 'citation_precision >= 0.9' is no longer "
        'read: write metric = "citation_precision" and min = 0.9',
    ]
    fixed = text.replace("expect = 'at_least'\nthreshold = 0.5", "min = 0.5").replace(
        "check = 'citation_precision >= 0.9'", "metric = 'citation_precision'\nmin = 0.9"
    )
    suite = load_suite(_suite(tmp_path, fixed))
    assert [(f.min, f.max, f.expect) for f in suite.findings] == [
        (None, 0.0, None),
        (0.5, None, None),
    ]
    assert [(g.metric, g.min) for g in suite.gates] == [("citation_precision", 0.9)]


def test_unknown_suites_agents_and_scorers_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no suite named 'nope'; the suites are: -"):
        resolve_suite_path("nope", search=[tmp_path])
    (tmp_path / "mine.toml").write_text("name = 'mine'\n")
    (tmp_path / "notes.txt").write_text("not a suite\n")
    with pytest.raises(ConfigError, match="no suite named 'nope'; the suites are: mine "):
        resolve_suite_path("nope", search=[tmp_path])
    with pytest.raises(ConfigError, match="does not exist"):
        load_suite(tmp_path / "absent.toml")
    path = _suite(tmp_path, "name = 'x'\ndatasets = ['cases.jsonl']\nscorers = ['recall']")
    with pytest.raises(ConfigError, match="unknown scorer 'recall'"):
        plan_run(load_suite(path))
    (tmp_path / "cases.jsonl").write_text(DATASET.replace("university", "ghost"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"names agent\(s\) \['ghost'\]"):
        plan_run(load_suite(tmp_path / "s.toml"))


def test_a_suites_judge_cards_are_read_beside_it_and_checked_before_a_case_runs(
    tmp_path: Path,
) -> None:
    from citelab import InvalidInput
    from citelab.evals import run
    from citelab.evals.cards import judge_card

    judge_card(None, {"name": "lexical", "threshold": 0.9}, resamples=50).save(
        tmp_path / "cards" / "other.json"
    )
    text = GOOD.replace("judge = {", 'judge_cards = "cards/other.json"\njudge = {')
    suite = load_suite(_suite(tmp_path, text))
    assert suite.card_paths() == [tmp_path / "cards" / "other.json"]
    out = tmp_path / "out"
    with pytest.raises(InvalidInput, match=r"describes none of the run's judges"):
        run(suite, out_dir=out, progress=False, preflight=False)
    assert not (out / "records.jsonl").exists()


SELECTING = """
name = "x"
datasets = ["many.jsonl"]
seed = 3
models = ["extractive", { spec = "perturbed", label = "faulty", variants = ["b"], limit = 4 }]

[[variants]]
name = "a"

[[variants]]
name = "b"
"""


def _many(tmp_path: Path, count: int = 10) -> None:
    lines = [
        json.dumps({"id": f"c{i}", "agent": "university", "turns": [{"question": f"Fee {i}?"}]})
        for i in range(count)
    ]
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_model_may_run_some_variants_on_a_seeded_sample_of_cases(tmp_path: Path) -> None:
    _many(tmp_path)
    (tmp_path / "s.toml").write_text(SELECTING, encoding="utf-8")
    plan = plan_run(load_suite(tmp_path / "s.toml"))
    by_model: dict[tuple[str, str], list[str]] = {}
    for unit in plan.units:
        by_model.setdefault((unit.variant.name, unit.model.name), []).append(unit.case.id)
    assert sorted(by_model) == [("a", "extractive"), ("b", "extractive"), ("b", "faulty")]
    assert by_model[("a", "extractive")] == [f"c{i}" for i in range(10)]
    sample = by_model[("b", "faulty")]
    assert len(sample) == 4
    assert sample == sorted(sample, key=lambda case: int(case[1:]))  # in dataset order
    assert sample != ["c0", "c1", "c2", "c3"]  # a sample, not the first cases
    # The same sample in every run; another seed draws another one.
    again = plan_run(load_suite(tmp_path / "s.toml"))
    assert [u.case.id for u in again.units if u.model.name == "faulty"] == sample
    (tmp_path / "t.toml").write_text(SELECTING.replace("seed = 3", "seed = 4"), encoding="utf-8")
    other = plan_run(load_suite(tmp_path / "t.toml"))
    assert [u.case.id for u in other.units if u.model.name == "faulty"] != sample


def test_choosing_a_models_units_does_not_change_their_keys(tmp_path: Path) -> None:
    _many(tmp_path, 3)
    plain = SELECTING.replace(', variants = ["b"], limit = 4', "")
    (tmp_path / "s.toml").write_text(SELECTING, encoding="utf-8")
    (tmp_path / "p.toml").write_text(plain, encoding="utf-8")
    chosen = {u.names: u.key for u in plan_run(load_suite(tmp_path / "s.toml")).units}
    every = {u.names: u.key for u in plan_run(load_suite(tmp_path / "p.toml")).units}
    assert chosen.items() <= every.items()  # recorded answers and the model cache still apply
    assert len(every) > len(chosen)


def test_a_model_must_name_variants_the_suite_runs(tmp_path: Path) -> None:
    _many(tmp_path, 2)
    path = tmp_path / "s.toml"
    path.write_text(SELECTING.replace('variants = ["b"]', 'variants = ["b", "ghost"]'))
    with pytest.raises(ConfigError) as caught:
        plan_run(load_suite(path))
    assert str(path) in str(caught.value)
    assert "key models.1.variants: no variant named 'ghost'" in str(caught.value)
