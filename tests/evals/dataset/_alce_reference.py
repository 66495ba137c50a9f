"""ALCE's prompt rules, written out once more for the tests (from reading run.py and utils.py,
not from citelab's module), on data the tests write: the reference citelab must equal."""

from __future__ import annotations

from typing import Any

import numpy as np

SYSTEM = "You are a helpful assistant that answers the following questions with proper citations."


def shorter(docs: list[dict[str, Any]], ndoc: int, key: str) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for doc in docs:
        if key not in doc:
            if kept == []:
                kept.append({**doc, key: doc["text"]})
            break
        if "irrelevant" in doc[key] or "Irrelevant" in doc[key]:
            continue
        kept.append(doc)
        if len(kept) >= ndoc:
            break
    return kept


def fill(item: dict[str, Any], p: dict[str, Any], ndoc: int, key: str | None, test: bool) -> str:
    out = p["demo_prompt"].replace("{INST}", p["instruction"]).replace("{Q}", item["question"])
    if "{D}" in out:
        if ndoc == 0:
            out = out.replace("{D}\n", "")
        else:
            docs = shorter(item["docs"], ndoc, key) if key else item["docs"][:ndoc]
            listed = ""
            for i, doc in enumerate(docs):
                body = doc[key] if key else doc["text"]
                one = p["doc_prompt"].replace("{T}", doc["title"]).replace("{P}", body)
                listed += one.replace("{ID}", str(i + 1))
            out = out.replace("{D}", listed)
    out = out.replace("{A}", "").rstrip()
    if test:
        return out
    answer = item["answer"]
    if isinstance(answer, list):
        return out + "\n" + "\n".join(answer)
    return out + answer


def prompts(
    p: dict[str, Any],
    data: list[dict[str, Any]],
    *,
    shot: int,
    ndoc: int,
    seed: int,
    no_doc_in_demo: bool = False,
    ndoc_in_demo: int | None = None,
    use_shorter: str | None = None,
    quick_test: int | None = None,
) -> list[tuple[int, str]]:
    np.random.seed(seed)
    demo_ndoc = 0 if no_doc_in_demo else (ndoc if ndoc_in_demo is None else ndoc_in_demo)
    head = ""
    for demo_id in np.random.choice(len(p["demos"]), shot, replace=False):
        head += fill(p["demos"][demo_id], p, demo_ndoc, use_shorter, False) + p["demo_sep"]
    order = list(range(len(data)))
    if quick_test is not None:
        order = [int(i) for i in np.random.choice(len(data), quick_test, replace=False)]
    return [(i, head + fill(data[i], p, ndoc, use_shorter, True)) for i in order]
