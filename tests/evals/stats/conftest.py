"""WiCE's dev split as known-truth data for the estimators' coverage tests: every claim's
human label, and the default judge's score of it (loaded once per session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
FOUND = [
    base / "shared" / "testdata" / "wice" / "claim_dev.jsonl"
    for base in (ROOT.parent, ROOT.parent.parent)
    if (base / "shared" / "testdata" / "wice" / "claim_dev.jsonl").is_file()
]


@pytest.fixture(scope="session")
def wice_scored() -> tuple[np.ndarray, np.ndarray]:
    """(people's labels, ``lexical_trained``'s scores) of WiCE's dev claims."""
    if not FOUND:
        pytest.skip(
            "WiCE's dev split is not in ../shared/testdata/wice/ (claim_dev.jsonl: third-party "
            "data kept outside the repository)"
        )
    from citelab.evals.judges import build_judge
    from citelab.evals.labels import load_label_set

    labels = load_label_set(FOUND[0])
    truth = np.array([pair.label for pair in labels.pairs], dtype=float)
    judge = build_judge("lexical_trained")
    score = np.array([judge.score(p.claim, "\n".join(p.evidence)) for p in labels.pairs])  # type: ignore[attr-defined]
    return truth, score
