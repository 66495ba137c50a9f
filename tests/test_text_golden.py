"""The text normaliser's readings are unchanged: stems, content words, sentences, the lexical
judges' terms and tokens, the trained judge's features and the supporting span, on every text
of the fixture corpora, datasets and labelled claims, equal what they were when recorded.

The trained judge's shipped parameters (``evals/judges/data/support_model.json``) were fitted
to its features, so they must not move when the normaliser is reorganised. Record again only
on purpose (``python tests/test_text_golden.py --record``), and say why in the commit.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).with_name("text_golden.json.gz")


def _texts() -> tuple[list[str], list[tuple[str, str]]]:
    """Every text of the fixtures, and (claim, evidence) pairs."""
    texts: list[str] = []
    for path in sorted((ROOT / "fixtures" / "corpora").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for translation in json.loads(line).get("translations", {}).values():
                texts += [translation.get("title", ""), translation.get("content", "")]
    for path in sorted((ROOT / "fixtures" / "datasets").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for turn in json.loads(line).get("turns", []):
                texts.append(turn["question"])
                texts += [claim["text"] for claim in turn.get("claims", [])]
    pairs: list[tuple[str, str]] = []
    labels = ROOT / "fixtures" / "judges" / "support_labels.jsonl"
    for line in labels.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        evidence = "\n".join(row["evidence"])
        texts += [row["claim"], evidence]
        pairs.append((row["claim"], evidence))
    # Claims against passages they do not come from, too: most pairs a judge sees are those.
    passages = [text for text in texts if len(text) > 200]
    pairs += [(texts[i], passages[i % len(passages)]) for i in range(0, len(texts), 7)]
    return texts, pairs


def _readings() -> dict[str, Any]:
    from citelab import _lexicon
    from citelab.evals.judges import _support_model
    from citelab.evals.judges import content_terms as judge_terms
    from citelab.evals.judges._support_model import support_features
    from citelab.sources import supporting_span

    texts, pairs = _texts()
    words = sorted({word for text in texts for word in re.findall(r"\w+", text)})
    return {
        "stem": [_lexicon.stem(_lexicon.fold(word)) for word in words],
        "stems_of": [sorted(_lexicon.stems_of(text)) for text in texts],
        "content_terms": [
            [[t.stem, t.word] for t in _lexicon.content_terms(text)] for text in texts
        ],
        "sentences": [_lexicon.sentences(text) for text in texts],
        "judge_terms": [sorted(judge_terms(text)) for text in texts],
        "support_tokens": [_support_model._tokens(text) for text in texts],
        "support_token_kinds": [
            [_support_model._token(token) for token in _support_model._tokens(text)]
            for text in texts
        ],
        "support_features": [support_features(claim, evidence) for claim, evidence in pairs],
        "supporting_span": [supporting_span(claim, evidence) for claim, evidence in pairs],
    }


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_the_normaliser_reads_every_fixture_text_as_recorded() -> None:
    recorded = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    now = _normal(_readings())
    assert now.keys() == recorded.keys()
    for name, values in recorded.items():
        assert len(now[name]) == len(values), name
        changed = [i for i, (a, b) in enumerate(zip(now[name], values, strict=True)) if a != b]
        assert not changed, f"{name}: {len(changed)} readings changed, first #{changed[0]}"


def test_the_recording_covers_many_texts() -> None:
    recorded = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    assert len(recorded["stems_of"]) > 500
    assert len(recorded["support_features"]) > 200
    assert len(recorded["stem"]) > 2000


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    GOLDEN.write_bytes(gzip.compress(json.dumps(_readings()).encode(), mtime=0))
