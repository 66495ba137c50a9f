# %% [markdown]
# # The evaluation report: run the bundled suite, explore it, try another model
#
# **What you learn:** run citelab's default evaluation suite, read its results as pandas tables
# at each level (variant, case, statement, citation), check the suite's findings, plot the
# ablations, and point the same evaluation at a model behind an OpenAI-compatible endpoint.
#
# **For whom:** researchers measuring citation quality, and anyone comparing models or agent
# settings.
#
# **Time to run:** about 30 seconds on a laptop, offline. The suite runs every case of the three
# fixture datasets under five variants with the extractive model, and 16 cases of each dataset
# on the baseline with the perturbing model (citation faults injected at known rates: the
# report's "Judge agreement on injected faults"), 468 conversations in all. To look around
# faster, set `LIMIT` below to a number of cases per dataset — but the datasets list their
# multi-round cases last, so a limited run shows little of the ablations.

# %%
LIMIT = None  # e.g. 10 for a quick look (at most this many cases per dataset)

# %% [markdown]
# ## 1. The suite
#
# A suite is configuration (`evaluations/suites/default.toml`): datasets × variants × models,
# scorers, and *findings* — claims about the variants that the report checks. Each variant is an
# ablation written as agent settings, not a code change.

# %%
import pandas as pd

from citelab.evals import load_suite

suite = load_suite("default")
print(suite.description, "\n")
print("datasets:", suite.datasets, "· models:", [model.name for model in suite.models])
pd.DataFrame(
    {"variant": variant.name, "overrides": variant.set or "—", "what": variant.description}
    for variant in suite.variants
)

# %% [markdown]
# ## 2. Run it
#
# `run` answers every case through the answer service (bounded concurrency, a progress bar),
# scores every turn, and writes CSV/Parquet tables, `run.json` and a self-contained
# `report.html` to `out_dir`. Model calls are cached in `out_dir`, and finished cases are kept:
# run it again with the same `out_dir` and nothing is recomputed (cases that failed, or were
# run under another configuration, run again). We write into `reports/default/` beside this
# notebook, so JupyterLab's file browser shows the report; the command-line equivalent is
# `citelab eval --suite default --out notebooks/reports/default`.

# %%
from pathlib import Path

from citelab.evals import run

out_dir = Path("reports") / "default"
result = run(suite, out_dir=out_dir, limit=LIMIT)
conversations = result.turns.groupby(["variant", "model", "dataset", "case_id"]).ngroups
print(f"{conversations} conversations, {len(result.turns)} turns scored")
print("report:", out_dir / "report.html")
print("failed turns:", len(result.turns) - int(result.turns["error"].isna().sum()))
sorted(path.name for path in out_dir.iterdir())

# %% [markdown]
# A failed turn (a model that timed out, say) is never hidden: `result.errors()` groups them by
# cause, the report opens with them, and `citelab eval` exits non-zero.

# %%
result.errors()

# %% [markdown]
# ### The report, here
#
# `result.show()` puts the whole report in this notebook — summary, paired differences, plots
# and the **case browser**: filter the turns by variant, dataset, a metric they missed or
# "differs from baseline", and open one to see its answer with the cited spans highlighted, the
# sources it held and cited, the gold claims, every scorer's verdict with its reasons, and the
# rounds. It is a sandboxed frame, so its page styles stay out of JupyterLab's.

# %%
result.show(height=720)

# %% [markdown]
# ## 3. Did the findings hold?

# %%
from citelab.evals import evaluate_findings

findings = evaluate_findings(result, suite.findings)
print(f"{sum(f.holds for f in findings)} of {len(findings)} findings hold")
pd.DataFrame(
    {"finding": f.finding.title, "holds": f.holds, "evidence": f.sentence} for f in findings
)

# %% [markdown]
# *Gates* (`[[gates]]` in the suite) are checks a CI run must pass: `citelab eval` exits 3 when
# one does not (the README's "Gates for CI"). The default suite asks that the baseline's
# citation precision be at least 0.9, and that the terse contract's recall be no worse than
# the baseline's by more than 0.02 with 95% confidence, paired on the cases.
#
# The offline model does not read its prompt, so the terse contract's answers are the
# baseline's, word for word: the second gate compares identical answers and says so ("not
# informative"), neither passed nor failed. With a model that reads the prompt it becomes a
# real check.

# %%
from citelab.evals import evaluate_gates

gates = evaluate_gates(result, suite.gates)
passed = sum(g.passed is True for g in gates)
uninformative = sum(g.verdict == "uninformative" for g in gates)
print(f"{passed} of {len(gates)} gates pass, {uninformative} not informative (identical answers)")
for gate in suite.gates:
    if gate.not_worse_than:
        rule = f"not worse than {gate.not_worse_than}'s by more than {gate.margin}"
        rule += f", {gate.confidence:.0%} confidence"
    else:
        rule = f"at least {gate.min}"
    print(f"{gate.variant}'s {gate.metric}: {rule}")
pd.DataFrame({"gate": g.name, "verdict": g.verdict, "evidence": g.sentence} for g in gates)

# %% [markdown]
# ## 4. The results at each level
#
# `result.to_pandas(level=...)` answers at four levels.
#
# **Variant level:** one row per variant × model × metric, with the pooled value and a 95%
# bootstrap interval that resamples *cases* (a conversation's turns stay together).

# %%
variants = result.to_pandas(level="variant").query("model == 'extractive'")
order = [variant.name for variant in suite.variants]
variants.pivot(index="metric", columns="variant", values="value")[order].round(3)

# %% [markdown]
# **Case level:** one row per answered turn, one column per metric, with facts about the turn
# (rounds, searches, sources). For instance the baseline turns that missed a gold claim:

# %%
cases = result.to_pandas(level="case")
baseline = cases[cases["variant"] == "baseline"]
missed = baseline[baseline["claim_recall"] < 1]
missed[["dataset", "case_id", "turn", "question", "rounds", "sources", "claim_recall"]]

# %% [markdown]
# **Statement level:** one row per statement of an answer (or gold claim) and metric: is it
# supported by the sources it cites, is the claim made?

# %%
statements = result.to_pandas(level="statement")
print(statements["metric"].value_counts().to_string(), "\n")
statements[statements["variant"] == "baseline"].head(6)

# %% [markdown]
# **Citation level:** one row per citation and metric. `numbering_stability` asks of every
# marker: does the number, after finalizing, resolve to the entity it meant when the model
# wrote it (`meant`), or to another (`resolved`)? The unstable ones of the `no_tool_rewrite`
# ablation:

# %%
citations = result.to_pandas(level="citation")
stability = citations[citations["metric"] == "numbering_stability"]
unstable = stability[~stability["hit"].astype(bool)]
print(unstable.groupby("variant").size().reindex(order, fill_value=0).to_string(), "\n")
unstable[unstable["variant"] == "no_tool_rewrite"][
    ["dataset", "case_id", "turn", "round", "number", "meant", "resolved"]
].head(8)

# %% [markdown]
# ## 5. The ablations: differences from the baseline
#
# The ablations matter in *multi-round* turns (the model searched again). `result.differences()`
# gives each variant minus the baseline on the cases both were scored on, with a *paired*
# bootstrap interval (the same cases drawn for both sides), and says whether it excludes 0;
# `cases` and `units` say how much evidence there is: on fewer than 30 units, or when every
# resample is the same, `too_few` is true, the report shows no interval, and the difference
# never counts as excluding 0.

# %%
METRICS = ["numbering_stability", "citation_precision", "citation_recall", "gold_sources"]
diffs = result.differences(subset="multi_round")
diffs = diffs[diffs["metric"].isin(METRICS)]
SHOWN = ["variant", "metric", "difference", "ci_low", "ci_high", "excludes_zero", "too_few"]
diffs[[*SHOWN, "cases", "units"]]

# %% [markdown]
# `result.plot(...)` draws the same figures as the report, one colour per variant everywhere:
# `"differences"` (a point and its interval per variant, 0 marked), `"values"`, `"stability"`.

# %%
%matplotlib inline
result.plot("differences", subset="multi_round", metrics=METRICS)

# %%
result.plot("stability")

# %% [markdown]
# Without the tool-message rewrite, citations written after a second search resolve to other
# sources (see `03_multi_round_numbering.ipynb` for one such turn, step by step); precision
# suffers with them, and the gold sources fall too, on too few units (under 30) for their
# interval to count. `merge_replace` costs the offline model nothing here,
# because it only cites its freshest view — the findings above say so.
#
# Across the turns of a conversation, `cross_turn_stability` asks whether a follow-up's `[n]`
# names the source it named in earlier turns (and a source keeps its number). The default
# numbering holds it; `turn_numbering` (each turn numbered 1..k, the seed's way) does not, and
# neither does `merge_replace`, whose replacing search renumbers the held sources from 1
# (a value of 1.000 in every turn has no spread to resample: its interval is Wilson's):

# %%
across = result.summary(subset="tag:multi_turn")
across = across[across["metric"] == "cross_turn_stability"].set_index("variant").loc[order]
across[["model", "value", "ci_low", "ci_high", "units", "too_few", "interval"]].round(3)

# %% [markdown]
# The full report, with these plots and every case, is `reports/default/report.html`.
#
# ## 6. Another model: any OpenAI-compatible endpoint
#
# `OpenAIModel` talks to any server with OpenAI's chat-completions API (OpenAI, vLLM,
# llama.cpp, …) through the `openai` SDK. So that this notebook runs offline, we serve
# citelab's own extractive model at a local endpoint — what `citelab serve-model` does in a
# terminal — and talk to it over real HTTP.

# %%
from citelab.models import ExtractiveModel, OpenAIModel, serve_in_thread

server = serve_in_thread(ExtractiveModel())
print("serving at", server.base_url)
remote = OpenAIModel("extractive", base_url=server.base_url)

# %% [markdown]
# Any agent can use it: name it in the service's `models` and in the agent's `model`. (For a
# real endpoint: `OpenAIModel("<model>", base_url="http://…/v1", api_key=…)`, or the
# `OPENAI_BASE_URL` / `OPENAI_API_KEY` environment variables.)

# %%
from citelab.agent import default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore

served_agent = default_agents()["university"].model_copy(update={"model": "over-http"})
service = AnswerService(
    {"university": served_agent},
    models={"over-http": remote},
    store=MemoryConversationStore(),
    logs=MemoryLogStore(),
)
answer = await service.answer("university", "How much is the semester fee?")
print(answer.text)
[source.uri for source in answer.sources]

# %% [markdown]
# And a small evaluation run through it: the suite's baseline on the first five cases of each
# dataset, once with the model in-process and once over HTTP. Models in a suite are given by
# spec and options — `openai:<model>` builds an `OpenAIModel`. The same model behind an endpoint
# must score exactly the same.

# %%
from citelab.evals import ModelSpec, Variant

over_http = ModelSpec(
    spec="openai:extractive", options={"base_url": server.base_url}, label="over-http"
)
small = suite.model_copy(
    update={
        "variants": [Variant(name="baseline")],
        "models": [ModelSpec(spec="extractive"), over_http],
        "findings": [],  # the suite's findings and gates name the variants left out
        "gates": [],
    }
)
http_dir = Path("reports") / "over-http"
small_result = run(small, out_dir=http_dir, limit=5, progress=False)
compare = small_result.to_pandas(level="variant")
compare = compare.pivot(index="metric", columns="model", values="value")
print("identical metrics over HTTP:", compare["extractive"].equals(compare["over-http"]))
compare.round(3)

# %% [markdown]
# ## 7. Two runs side by side
#
# `citelab compare RUN_A RUN_B` (or `compare_runs`) matches two run folders' cases by id — two
# models, two prompt versions, before and after a change — and reports B minus A with paired
# intervals, and the case browser over both. Here: the run over HTTP (five cases of each
# dataset) against the same cases of the full run.

# %%
from citelab.evals import compare_runs, write_comparison

comparison = compare_runs(out_dir, http_dir, labels=["in-process", "over-http"])
print(f"{comparison.matched} cases matched; only in A: {comparison.only[0]}")
written = write_comparison(comparison, Path("reports") / "compare")
changed = comparison.result.differences()
changed = changed[changed["model"] == "baseline · extractive"]  # the series both runs have
print("baseline metrics that differ:", int((changed["difference"] != 0).sum()))

# %%
server.stop()
