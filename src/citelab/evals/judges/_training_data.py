"""What a trained judge was trained on, by content: a fingerprint of its training claims.

A card made on labels the judge learnt from flatters it. The training file's sha256 finds
that file only; the same claims re-exported, re-ordered, subset or paired with other evidence
(WiCE's full-page ``claim_dev.jsonl`` beside its oracle chunks) have another sha256. So the
training script also writes, beside the parameters, the sorted keys of its training claims
(:func:`claim_key`: a short hash of the normalised claim text, from which no text can be read
back), and a card counts how many of its own claims have a key in that set. The file's format
and the rule a card applies are in ``docs/corrected-metrics.md`` ("In-sample cards").
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citelab._errors import ConfigError

__all__ = [
    "FINGERPRINT_FORMAT",
    "KEY_RULE",
    "claim_key",
    "fingerprint_document",
    "fingerprint_path",
    "read_fingerprint",
]

FINGERPRINT_FORMAT = "citelab-training-fingerprint/1"
KEY_RULE = (
    "the first 16 hex digits of the sha256 of the claim's text, NFKC-normalised, "
    "case-folded, with runs of whitespace as one space and none at either end"
)


def claim_key(claim: str) -> str:
    """The content key of a labelled claim (see :data:`KEY_RULE`)."""
    text = " ".join(unicodedata.normalize("NFKC", claim).casefold().split())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fingerprint_path(model: Path) -> Path:
    """Where the fingerprint of the parameter file ``model`` lives: beside it,
    ``<stem>.training.json``."""
    return model.with_name(f"{model.stem}.training.json")


def fingerprint_document(
    claims: Iterable[str], parameters: str, sources: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The fingerprint file's content: the sorted distinct keys of ``claims``, for the
    parameter file whose digest is ``parameters``, trained on ``sources`` (name, sha256,
    claims)."""
    return {
        "format": FINGERPRINT_FORMAT,
        "parameters": parameters,
        "key": KEY_RULE,
        "sources": [dict(source) for source in sources],
        "claims": sorted({claim_key(claim) for claim in claims}),
    }


def read_fingerprint(model: Path, digest: str) -> frozenset[str]:
    """The training claims' keys of the parameter file ``model`` (digest ``digest``); empty
    when it has no fingerprint file. A fingerprint of other parameters is an error."""
    path = fingerprint_path(model)
    if not path.is_file():
        return frozenset()
    where = f"training fingerprint {path}"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read it: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FINGERPRINT_FORMAT:
        raise ConfigError(f"{where}: not a {FINGERPRINT_FORMAT} file")
    if document.get("parameters") != digest:
        raise ConfigError(
            f"{where}: belongs to parameters {document.get('parameters')!r}, not to "
            f"{model.name} ({digest}): write it again (scripts/train_support_judge.py "
            "--fingerprint-only)"
        )
    keys = document.get("claims")
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise ConfigError(f"{where}: claims must be a list of keys")
    return frozenset(keys)
