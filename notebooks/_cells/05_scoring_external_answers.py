# %% [markdown]
# # Scoring anyone's answers: ALCE files, vendor responses, and judges checked against people
#
# **What you learn:** score an ALCE-format result file exactly as ALCE's own `eval.py` does
# (and see where citelab's own mode differs), score a vendor API response through the
# converters, and see how far a support judge agrees with people: a judge card, on citelab's own
# labelled set and on WiCE's human labels.
#
# **For whom:** researchers who want a number they can put next to ALCE's published ones, and
# anyone scoring answers citelab did not produce.
#
# **Time to run:** under a minute, offline.

# %% [markdown]
# ## 1. An ALCE result file
#
# ALCE's result files are `{"data": [{"question", "docs": [{"title", "text"}], "output"}]}`,
# docs numbered from 1 in the output's `[n]` markers. This one was written for citelab (our own
# text); each answer shows one of ALCE's parsing behaviours.

# %%
import json

import pandas as pd

from citelab._paths import fixtures_dir

path = fixtures_dir() / "alce" / "lindholm_results.json"
items = json.loads(path.read_text(encoding="utf-8"))["data"]
pd.DataFrame({"id": i["id"], "output": i["output"]} for i in items)

# %% [markdown]
# ## 2. Score it as ALCE does
#
# `score_answers` reads the file and, for ALCE files, runs citation recall and precision in
# ALCE-compatible mode: NLTK's punkt sentences (offline), `<|im_end|>` removed, `[0]` naming the
# last doc, every marker range-checked before at most three are kept, and ALCE's precision
# rules. `scale=100` prints the figures as ALCE's tables do. The judge here is citelab's offline
# lexical judge; ALCE's own is an 11B NLI model, so the *numbers* differ from a GPU run, but
# given the same judge they are ALCE's, answer by answer.

# %%
from citelab.evals import score_answers

result = score_answers(path, "alce", judge="lexical")
print(result.summary(scale=100)[["metric", "value", "ci_low", "ci_high", "cases"]].round(1))

# %%
cases = result.to_pandas("case").set_index("case_id")
print(cases[["citation_recall_alce", "citation_precision_alce"]].round(3).to_string())

# %% [markdown]
# Answer `lindholm-6` is empty once `<|im_end|>` is removed, so ALCE skips it (no value, not a
# zero). The statement table shows how each sentence was split and which sources it cites —
# note `lindholm-4`, whose `[0]` cites the *last* doc, as ALCE's `docs[-1]` does.

# %%
statements = result.to_pandas("statement")
print(statements[["case_id", "claim", "citations", "reason"]].to_string(index=False))

# %% [markdown]
# ## 3. citelab's own mode, side by side
#
# citelab's own scorers read markers with citelab's grammar and splitter, and cap citations
# before checking them: `lindholm-5` cites `[2][1][3][7]` with three docs. ALCE rejects the
# statement (7 is out of range) before the cap; citelab with a cap of 3 keeps `[2][1][3]`.

# %%
both = score_answers(
    path,
    "alce",
    scorers=[
        {"name": "citation_recall", "alce_compat": True},
        {"name": "citation_recall", "max_citations": 3},
        {"name": "citation_precision", "alce_compat": True},
        {"name": "citation_precision", "max_citations": 3},
    ],
)
side = both.to_pandas("case").set_index("case_id")
print(side.loc[:, "citation_recall_alce":].round(3).to_string())

# %% [markdown]
# ## 4. A vendor response
#
# Vendor responses go through citelab's converters; their citations become `[n]` markers at
# the end of each cited span. Give the sources' passages (`sources` with `content`) so the judge
# has something to read. Here a Gemini response with a *thought* part (not answer text) and a
# maps chunk without a uri (not a source): the thought is left out of the answer's text, the
# maps chunk out of its sources (and declared in `dropped`), and the rest is scored.

# %%
from citelab.contract.convert import from_gemini

gemini = {
    "content": {
        "parts": [
            {"text": "Checking the ferry page first.", "thought": True},
            {"text": "Ferries leave Lindholm for Skarø every two hours in summer."},
        ]
    },
    "groundingMetadata": {
        "groundingChunks": [
            {"web": {"uri": "https://lindholm.example/ferries", "title": "Ferries"}},
            {"maps": {"title": "Ferry terminal"}},
        ],
        "groundingSupports": [
            {"segment": {"partIndex": 1, "endIndex": 59}, "groundingChunkIndices": [0, 1]}
        ],
    },
}
dropped: list[str] = []
print(from_gemini(gemini, dropped=dropped).text)
print("\n".join(dropped))
envelope = {
    "id": "ferry",
    "question": "How often do ferries go to Skarø?",
    "response": gemini,
    "sources": [
        {
            "uri": "https://lindholm.example/ferries",
            "content": "Ferries leave Lindholm for the island of Skarø every two hours in summer.",
        }
    ],
}
vendor = score_answers([envelope], "gemini")
print(vendor.summary()[["metric", "value"]].to_string(index=False))

# %% [markdown]
# ## 5. Is the judge any good? A judge card
#
# Every number above rests on the judge's support decisions. A **judge card** asks a judge
# every pair of a labelled set and measures its verdicts against the labels: accuracy,
# macro-F1, Cohen's κ, the AUC of its score, the confusion matrix, sensitivity and
# specificity, each with a bootstrap interval, and figures per category.
#
# First on citelab's own set: 209 pairs **written and labelled by citelab's developers** (not
# independent human labels), covering paraphrase, negation, numbers, partial support and word
# pairs. The default judge (`lexical_trained`) was trained on these very pairs beside WiCE's
# dev split, so its figures on them are in sample and flatter it; here we look at the plain
# `lexical` judge, which was trained on nothing.

# %%
from citelab.evals import judge_card

own = judge_card(None, "lexical")
print(own.summary())
own.table().round(3)

# %%
shown = ["category", "claims", "says_yes", "accuracy", "sensitivity", "specificity", "weak"]
own.categories_table()[shown].round(3)

# %% [markdown]
# The plain lexical judge cannot see a paraphrase (people say yes, it says no) and cannot see
# swapped word pairs (it says yes): the card names those categories as weak, the ones whose
# accuracy interval lies wholly below the judge's overall accuracy.
#
# ## 6. On people's labels: WiCE
#
# WiCE (Kamoi et al., EMNLP 2023) has real Wikipedia claims with the web pages they cite,
# labelled by people as supported, partially supported or not. citelab does not ship it
# (annotations ODC-BY 1.0, text from Wikipedia and Common Crawl): set `WICE_DIR` to a folder
# with its **dev** split (`oracle_claim_dev.jsonl`, and WiCE's published T5-3B outputs
# `dev_scores_t5-3b-anli.json`). The oracle-chunk file gives each claim about three chunks
# of its cited page; a claim's verdict is the best over its chunks (WiCE's protocol), and
# "partially supported" counts as *not* fully supported (printed with the card). T5-3B
# trained on ANLI, the kind of NLI model ALCE uses as its judge, sits beside our judge on the
# 100 claims its outputs cover.

# %%
import os
from pathlib import Path

from citelab.evals import Reference

wice = Path(os.environ.get("WICE_DIR", "../../shared/testdata/wice"))
card = None
if (wice / "oracle_claim_dev.jsonl").is_file():
    t5 = Reference.load("T5-3B (ANLI)", wice / "dev_scores_t5-3b-anli.json")
    card = judge_card(wice / "oracle_claim_dev.jsonl", "lexical", references=[t5])
    print(card.summary())
    print(card.labels.mapping_text())
else:
    print(f"skipped: WiCE's dev split is not in {wice}; set WICE_DIR to a copy of it")

# %%
%matplotlib inline
if card is not None:
    comparison = card.comparison_table()
    display(comparison.round(3))
    for _, row in comparison[comparison["claims_in"] != "all"].iterrows():
        interval = f"[{row['kappa_low']:.3f}, {row['kappa_high']:.3f}]"
        print(f"{row['judge']}: κ {row['kappa']:.3f} {interval} on {row['claims']} claims")
    display(card.plot())  # the ROC curve (T5-3B's point on it) and the figures by threshold

# %%
card  # the whole card (card.to_html() is the same as a self-contained page; card.save() its JSON)

# %% [markdown]
# On real text the lexical judge says yes less often than people do (the card's first line
# gives both shares): a citation metric it decides counts *fully stated* support, and misses
# paraphrase. Beside T5-3B, on the 100 claims T5-3B's outputs cover, its κ is lower, but the
# two intervals (the lines under the table) overlap widely: 100 claims cannot tell these two
# judges apart. For figures to publish, use an LLM judge (`{"name": "llm", "model": ...,
# "base_url": ...}`) or your own NLI judge named as `module:attr`, and make its card first.
# `calibration_table` puts the headline figures of several judges' cards in one table, beside
# the agreement ALCE published for its NLI judge (on ALCE's data, not on this set).

# %%
from citelab.evals import DEFAULT_JUDGE, calibration_table

cards = [judge_card(None, judge) for judge in (DEFAULT_JUDGE, "lexical")]
columns = ["judge", "pairs", "accuracy", "macro_f1", "kappa", "kappa_low", "kappa_high", "source"]
print(calibration_table(cards)[columns].round(3).to_string(index=False))

# %% [markdown]
# The plain lexical judge cannot see a changed number or a dropped "not": it says yes to
# most claims whose number was changed (the `numbers` row of its categories table above:
# low specificity) and to about half of those with a dropped "not". The default judge, a small
# logistic regression over lexical features (coverage, missing names and numbers, neighbouring
# word pairs, negation) trained on human labels, is right more often on exactly those
# categories (accuracy per category, below) — but these are the pairs it was trained on, so
# its column and its row of the table above are in sample and flatter it (its out-of-fold
# figures are in its shipped card). Neither judge sees through swapped word pairs. For
# figures to publish, use an LLM judge (`{"name": "llm", "model": ..., "base_url": ...}`) or
# your own NLI judge named as `module:attr`, and calibrate it first.

# %%
from citelab.evals import category_accuracy

print(category_accuracy(cards).round(3).to_string())

# %% [markdown]
# The same from a shell:
#
# ```
# citelab score results.json --format alce --scale 100 --out report/
# citelab score answers.jsonl --format gemini --judge lexical --json
# citelab judges card $WICE_DIR/oracle_claim_dev.jsonl --reference "T5-3B (ANLI)=$WICE_DIR/dev_scores_t5-3b-anli.json" --out cards/
# citelab judges card my_labels.csv --claim-column sentence --evidence-column passage --label-column gold
# citelab judges calibrate --judge lexical_trained --judge lexical --by-category
# ```

# %% [markdown]
# ## 7. Label pairs yourself
#
# A judge is only as trustworthy as its agreement with people, and the people can be you.
# `citelab.Labeller` shows one claim at a time with the passage it cites (the cited sentence
# marked) and takes **1** supported, **2** partly, **3** not supported, **S** skip and **U**
# undo, from the keyboard or its buttons. Each label is appended to a JSON Lines file and
# synced to disk before the next pair shows: a kernel restart loses nothing, and the same cell
# run again resumes where you stopped. Here the pairs are the citations scored in section 1,
# in an order fixed by the seed, the ones `lexical_trained` and `lexical` disagree on first.

# %%
import tempfile
from pathlib import Path

from citelab import Labeller

labels_file = Path(tempfile.mkdtemp()) / "labels.jsonl"  # a file of your own in real use
labeller = Labeller(result, labels_file, sample=20, seed=0, disagree=["lexical_trained", "lexical"])
labeller

# %% [markdown]
# The buttons call the same methods a cell can; each line keeps the pair, the label and the
# judges' verdicts (shown to the person only after the label, so they cannot anchor it).

# %%
labeller.label("supported")  # two labels to show the mechanics, not a reading of the pairs
labeller.label("not_supported")
for line in labels_file.read_text(encoding="utf-8").splitlines():
    row = json.loads(line)
    verdicts_of = ", ".join(f"{j}: {v}" for j, v in row["origin"]["verdicts"].items())
    print(f"{row['label']:<14} {row['claim']}  ({verdicts_of})")
print(labeller.progress["decided"], "of", labeller.progress["wanted"], "decided")

# %% [markdown]
# The file has the named columns a labelled set needs (`id`, `claim`, `evidence`, `label`), so
# a judge card reads it as it is: `citelab judges card labels.jsonl`.
