"""A judge card: how far one support judge agrees with people, on one labelled set.

:func:`judge_card` asks the judge every labelled pair (a judge with a batch method asks them
all at once), folds a claim's pairs into one verdict (WiCE's oracle chunks: yes when any
chunk is; the highest score), and measures the verdicts against the labels on claims:
accuracy, macro-F1, Cohen's κ, the confusion matrix, sensitivity and specificity, says-yes
rate, PPV and NPV, each with a seeded 95% bootstrap interval over claims; the AUC and a
threshold sweep when the judge gives a score (``score(statement, evidence) -> float``; the
lexical judge's word ``overlap`` serves as its score, and the card says so); figures per
category; and, side by side on the claims they cover, reference judges' published outputs
(:class:`Reference`: ``{claim id: score}``, e.g. WiCE's T5-3B outputs) with this judge's
figures on the same claims. ALCE's published agreement sits beside them as a reference point
on other data.

A :class:`JudgeCard` is JSON (``save``/``load``), a pandas table (``table()``), a picture
(``plot()``: ROC curve and figures against the threshold) and a self-contained HTML page
(``to_html()``; ``_repr_html_`` in a notebook).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from citelab._errors import ConfigError, InvalidInput
from citelab._validation import validation_problems
from citelab._version import __version__
from citelab.evals.cards._card_figures import Claims, agreement, bootstrap_draws, difference, sweep
from citelab.evals.cards._card_schema import (
    BootstrapInfo,
    CardData,
    CategoryFigures,
    GradeFigures,
    JudgeInfo,
    PublishedAgreement,
    ReferenceComparison,
    ThresholdSweep,
)
from citelab.evals.judges import DEFAULT_JUDGE, Judge, build_judge, claim_key
from citelab.evals.labels import (
    LabelColumns,
    LabelFormat,
    LabelledPair,
    LabelSet,
    LabelSource,
    PartialAs,
    load_label_set,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "ALCE_PUBLISHED",
    "DEFAULT_CARD_JUDGE",
    "IN_SAMPLE_SHARE",
    "JudgeCard",
    "JudgedPairs",
    "Reference",
    "TrainingOverlap",
    "ask_judge",
    "judge_card",
    "judge_label",
    "labels_of",
    "trained_on",
    "training_overlap",
]

DEFAULT_CARD_JUDGE = DEFAULT_JUDGE
"""The judge a card is about when none is named: the citation scorers' default
(:data:`citelab.evals.DEFAULT_JUDGE`), the one ``eval`` and ``score`` use."""

ALCE_PUBLISHED = (
    PublishedAgreement(judge="ALCE NLI (TRUE T5-11B), citation recall", accuracy=0.851,
                       kappa=0.698, source="Gao et al. 2023, ALCE, human evaluation"),
    PublishedAgreement(judge="ALCE NLI (TRUE T5-11B), citation precision", accuracy=0.776,
                       kappa=0.525, source="Gao et al. 2023, ALCE, human evaluation"),
)  # fmt: skip
"""The agreement of ALCE's NLI judge with its human annotators, as published (on ALCE's
ASQA/ELI5 answers, not on any set a card is made on)."""


class JudgeCard(CardData):
    """A judge's agreement with people on one labelled set (see the module docs); every
    field is described in :class:`~citelab.evals.cards._card_schema.CardData`."""

    def save(self, path: str | Path) -> Path:
        """Write the card as JSON; returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> JudgeCard:
        """A card saved with :meth:`save`; :class:`InvalidInput` naming what is wrong."""
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InvalidInput(f"cannot read judge card {source}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise InvalidInput(f"judge card {source}: not JSON ({exc})") from exc
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = validation_problems(exc, source.name, label="field ")
            raise InvalidInput(
                f"judge card {source} is not a citelab judge card:\n" + "\n".join(problems[:20])
            ) from exc

    def table(self) -> pd.DataFrame:
        """One row per figure: value, interval, and the counts of the shares."""
        rows: list[dict[str, Any]] = []
        figures = self.metrics
        for name in ("accuracy", "macro_f1", "kappa", "auc", "sensitivity", "specificity",
                     "says_yes", "ppv", "npv"):  # fmt: skip
            estimate = getattr(figures, name)
            if estimate is None:
                continue
            rows.append(
                {
                    "figure": name,
                    "value": estimate.value,
                    "low": estimate.low,
                    "high": estimate.high,
                    "count": getattr(estimate, "count", None),
                    "of": getattr(estimate, "of", None),
                }
            )
        return pd.DataFrame(rows).astype({"count": "Int64", "of": "Int64"})

    def comparison_table(self) -> pd.DataFrame:
        """This judge on all claims, then each reference beside this judge on its claims."""
        rows = [_figures_row(self.judge.label, "all", self.metrics)]
        for reference in self.references:
            subset = f"covered by {reference.name}"
            rows.append(_figures_row(reference.name, subset, reference.reference))
            rows.append(_figures_row(self.judge.label, subset, reference.judge))
        return pd.DataFrame(rows)

    def categories_table(self) -> pd.DataFrame:
        """Figures per category (empty when the set has no categories)."""
        rows = [
            {**_figures_row(c.category, "", c.figures), "weak": c.weak} for c in self.categories
        ]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return frame
        return frame.drop(columns=["claims_in"]).rename(columns={"judge": "category"})

    def sweep_table(self) -> pd.DataFrame:
        """The threshold sweep (empty for a judge without a score)."""
        if self.threshold is None:
            return pd.DataFrame()
        return pd.DataFrame([point.model_dump() for point in self.threshold.points])

    def plot(self) -> Figure:
        """The ROC curve and the figures against the threshold (matplotlib, no pyplot)."""
        return _card_display().plot(self)

    def to_html(self) -> str:
        """A self-contained HTML page (the plot inline as SVG; every text escaped)."""
        return _card_display().page(self)

    def _repr_html_(self) -> str:
        return _card_display().fragment(self)


@dataclass(frozen=True)
class CardDisplay:
    """How a card draws itself: the report's functions, registered by
    ``citelab.evals.report`` when it is imported (cards sit below the report)."""

    plot: Callable[[JudgeCard], Figure]
    page: Callable[[JudgeCard], str]
    fragment: Callable[[JudgeCard], str]


_CARD_DISPLAY: dict[str, CardDisplay] = {}


def set_card_display(display: CardDisplay) -> None:
    """Register how cards draw themselves (the report does, on import)."""
    _CARD_DISPLAY["report"] = display


def _card_display() -> CardDisplay:
    if "report" not in _CARD_DISPLAY:  # only while citelab.evals is still being imported
        raise RuntimeError("cards are drawn by citelab.evals.report: import citelab.evals")
    return _CARD_DISPLAY["report"]


def _figures_row(judge: str, claims_in: str, figures: Any) -> dict[str, Any]:
    auc = figures.auc.value if figures.auc is not None else None
    return {
        "judge": judge,
        "claims_in": claims_in,
        "claims": figures.claims,
        "says_yes": figures.says_yes.value,
        "accuracy": figures.accuracy.value,
        "macro_f1": figures.macro_f1.value,
        "kappa": figures.kappa.value,
        "kappa_low": figures.kappa.low,
        "kappa_high": figures.kappa.high,
        "auc": auc,
        "sensitivity": figures.sensitivity.value,
        "specificity": figures.specificity.value,
    }


@dataclass(frozen=True)
class Reference:
    """A reference judge's published outputs: ``{claim id: score}`` (yes at ``score >=
    threshold``; the AUC from the scores) or ``{claim id: true/false}`` (verdicts only)."""

    name: str
    outputs: Mapping[str, float | bool]
    threshold: float = 0.5
    file: str = ""
    sha256: str = ""

    @classmethod
    def load(cls, name: str, path: str | Path, threshold: float = 0.5) -> Reference:
        """Read a JSON object of outputs (WiCE's ``dev_scores_*.json``)."""
        source = Path(path)
        try:
            raw = source.read_bytes()
            data = json.loads(raw)
        except OSError as exc:
            raise InvalidInput(f"cannot read reference {name} {source}: {exc.strerror}") from exc
        except ValueError as exc:
            raise InvalidInput(f"reference {name} {source}: not JSON ({exc})") from exc
        if not isinstance(data, dict) or not data:
            raise InvalidInput(
                f"reference {name} {source}: expected a JSON object {{claim id: score}}"
            )
        for key, value in data.items():
            if isinstance(value, bool):
                continue
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise InvalidInput(
                    f"reference {name} {source}: {key!r}: expected a number or true/false, "
                    f"got {json.dumps(value)[:40]}"
                )
        digest = hashlib.sha256(raw).hexdigest()
        return cls(name, data, threshold, source.name, digest)

    @property
    def scored(self) -> bool:
        """The outputs are scores (not all true/false)."""
        return not all(isinstance(v, bool) for v in self.outputs.values())

    def verdict(self, value: float | bool) -> bool:
        return value if isinstance(value, bool) else value >= self.threshold


@dataclass(frozen=True)
class JudgedPairs:
    """A judge's verdict (and score, when it gives one) on each pair, in order."""

    verdicts: list[bool]
    scores: list[float] | None
    score_name: str | None


def ask_judge(judge: Judge, pairs: Sequence[LabelledPair]) -> JudgedPairs:
    """Every pair's verdict (a batch when the judge has ``supports_many``) and score."""
    questions = [(p.claim, "\n".join(p.evidence)) for p in pairs]
    many = getattr(judge, "supports_many", None)
    if callable(many):
        verdicts = [bool(v) for v in many(questions)]
    else:
        verdicts = [bool(judge.supports(claim, evidence)) for claim, evidence in questions]
    function, name = _score_function(judge)
    if function is None:
        return JudgedPairs(verdicts, None, None)
    return JudgedPairs(verdicts, [_number(function(c, e), judge) for c, e in questions], name)


def _score_function(judge: Judge) -> tuple[Any, str | None]:
    """``score`` when the judge has one; the lexical judge's ``overlap`` otherwise."""
    for name in ("score", "overlap"):
        function = getattr(judge, name, None)
        if callable(function):
            return function, name
    return None, None


def _number(value: Any, judge: Judge) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigError(f"judge {judge.name}: score() must return a number, got {value!r}")
    return float(value)


def judge_label(judge: Judge) -> str:
    """The judge's name, with its threshold or model when it has one."""
    config = judge.config()
    for key in ("model", "threshold"):
        value = config.get(key)
        if value is not None:
            shown = f"{value:g}" if isinstance(value, float) else value
            return f"{judge.name} ({key}={shown})"
    return judge.name


def labels_of(
    labels: LabelSet | Sequence[LabelledPair] | str | Path | None,
    label_format: LabelFormat = "auto",
    *,
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> LabelSet:
    """A label set from a set, pairs in memory, a file, or None (citelab's own set)."""
    if isinstance(labels, LabelSet):
        return labels
    if isinstance(labels, Sequence) and not isinstance(labels, str):
        return LabelSet.of(list(labels))
    return load_label_set(
        labels, label_format, partial_as=partial_as, columns=columns, label_map=label_map
    )


@dataclass(frozen=True)
class _Folded:
    """The judged pairs folded into claims."""

    units: list[str]
    claims: Claims
    categories: list[str]
    grades: list[str]


def _fold(label_set: LabelSet, judged: JudgedPairs) -> _Folded:
    """One verdict per claim (yes when any of its pairs is) and its highest score."""
    units = list(label_set.units)
    position = {unit: i for i, unit in enumerate(units)}
    index = np.array([position[p.unit] for p in label_set.pairs])
    first = {p.unit: p for p in reversed(label_set.pairs)}
    truth = np.array([first[u].label for u in units], dtype=bool)
    verdict = np.zeros(len(units), dtype=bool)
    np.logical_or.at(verdict, index, np.array(judged.verdicts, dtype=bool))
    score = None
    if judged.scores is not None:
        score = np.full(len(units), -np.inf)
        np.maximum.at(score, index, np.array(judged.scores, dtype=float))
    return _Folded(
        units,
        Claims(truth, verdict, score),
        [first[u].category for u in units],
        [first[u].grade or "" for u in units],
    )


def judge_card(
    labels: LabelSet | Sequence[LabelledPair] | str | Path | None = None,
    judge: str | Mapping[str, Any] | Judge = DEFAULT_CARD_JUDGE,
    *,
    references: Iterable[Reference] = (),
    seed: int = 0,
    resamples: int = 1000,
    label_format: LabelFormat = "auto",
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> JudgeCard:
    """The card of ``judge`` on ``labels`` (a :class:`LabelSet`, pairs, a file read with
    :func:`load_label_set`, or None: citelab's own set); see the module docs."""
    label_set = labels_of(
        labels, label_format, partial_as=partial_as, columns=columns, label_map=label_map
    )
    built = build_judge(judge if isinstance(judge, str | Judge) else dict(judge))
    judged = ask_judge(built, label_set.pairs)
    return card_of(label_set, built, judged, references=references, seed=seed, resamples=resamples)


def card_of(
    label_set: LabelSet,
    judge: Judge,
    judged: JudgedPairs,
    *,
    references: Iterable[Reference] = (),
    seed: int = 0,
    resamples: int = 1000,
) -> JudgeCard:
    """The card from verdicts already asked (:func:`ask_judge`)."""
    if resamples < 1:
        raise InvalidInput(f"resamples must be at least 1, got {resamples}")
    if seed < 0:
        raise InvalidInput(f"seed must be 0 or more, got {seed}")
    folded = _fold(label_set, judged)
    draws = bootstrap_draws(len(folded.units), resamples, seed)
    figures = agreement(folded.claims, draws)
    categories = _categories(folded, figures.accuracy.value, seed, resamples)
    threshold = _sweep(judge, folded, judged.score_name)
    card = JudgeCard(
        citelab_version=__version__,
        judge=JudgeInfo(
            name=judge.name,
            label=judge_label(judge),
            config=judge.config(),
            score=judged.score_name,
        ),
        labels=label_set.source,
        bootstrap=BootstrapInfo(seed=seed, resamples=resamples),
        metrics=figures,
        threshold=threshold,
        categories=categories,
        weak_categories=[c.category for c in categories if c.weak],
        grades=_grades(folded, seed, resamples),
        references=[_compare(r, folded, seed, resamples) for r in references],
        published=list(ALCE_PUBLISHED),
    )
    overlap = training_overlap(judge, label_set)
    in_sample = trained_on(judge, label_set.source) or overlap.in_sample(judge.name)
    card = card.model_copy(update={"in_sample": in_sample})
    notes = _notes(card)
    if overlap.shared and not in_sample:
        notes.insert(0, overlap.note(judge.name))
    return card.model_copy(update={"notes": notes})


#: A card more than this share of whose claims are in the judge's training data is in sample
#: (refused for corrections without --allow-in-sample); a smaller overlap is a note.
IN_SAMPLE_SHARE = 0.1
_OPTIMISTIC = (
    "its figures here are optimistic, and the card corrects no metric unless you insist "
    "(--allow-in-sample); the honest figures are out of fold (citelab's shipped card)."
)


def trained_on(judge: Judge, source: LabelSource) -> str | None:
    """The sentence saying that ``judge`` was trained on the labels of ``source`` (their
    file's sha256 is one its parameters' provenance names), else None."""
    parameters = getattr(judge, "parameters", None)
    document = getattr(parameters, "document", None)
    provenance = document.get("provenance") if isinstance(document, Mapping) else None
    data = provenance.get("data") if isinstance(provenance, Mapping) else None
    if not source.sha256 or not isinstance(data, list):
        return None
    for entry in data:
        if isinstance(entry, Mapping) and entry.get("sha256") == source.sha256:
            return (
                f"{judge.name} was trained on these very labels (the file's sha256 is that of "
                f"its training data {entry.get('name', '')!s}): {_OPTIMISTIC}"
            )
    return None


@dataclass(frozen=True)
class TrainingOverlap:
    """How many of a label set's claims are in a judge's training data, by content."""

    shared: int
    claims: int

    @property
    def share(self) -> float:
        return self.shared / self.claims if self.claims else 0.0

    def counted(self, judge: str) -> str:
        return (
            f"{self.shared} of these {self.claims} claims ({self.share:.0%}) are in {judge}'s "
            "training data (matched by their normalised text)"
        )

    def in_sample(self, judge: str) -> str | None:
        """The in-sample sentence when more than :data:`IN_SAMPLE_SHARE` are shared."""
        return f"{self.counted(judge)}: {_OPTIMISTIC}" if self.share > IN_SAMPLE_SHARE else None

    def note(self, judge: str) -> str:
        return (
            f"{self.counted(judge)}: at most {IN_SAMPLE_SHARE:.0%}, so the card is not "
            "refused, but those claims' figures flatter the judge."
        )


def training_overlap(judge: Judge, label_set: LabelSet) -> TrainingOverlap:
    """The label set's claims (a pair's ``claim_id``, else its id) whose text is one the
    judge's parameters were trained on (their ``training_keys``; none for other judges)."""
    keys = getattr(getattr(judge, "parameters", None), "training_keys", None)
    claims = {pair.claim_id or pair.id: pair.claim for pair in label_set.pairs}
    if not keys:
        return TrainingOverlap(0, len(claims))
    shared = sum(claim_key(text) in keys for text in claims.values())
    return TrainingOverlap(shared, len(claims))


def _subset_draws(size: int, resamples: int, seed: int, salt: str) -> np.ndarray:
    digest = hashlib.sha256(salt.encode()).digest()
    return bootstrap_draws(size, resamples, seed ^ int.from_bytes(digest[:4], "big"))


def _categories(
    folded: _Folded, overall: float | None, seed: int, resamples: int
) -> list[CategoryFigures]:
    """Figures per category (none when the set has none). A category is weak when its
    accuracy's interval lies wholly below the overall accuracy."""
    names = list(dict.fromkeys(folded.categories))
    if names == [""]:
        return []
    found = []
    for name in names:
        index = np.array([i for i, c in enumerate(folded.categories) if c == name])
        draws = _subset_draws(len(index), resamples, seed, f"category:{name}")
        figures = agreement(folded.claims.take(index), draws)
        high = figures.accuracy.high
        weak = overall is not None and high is not None and high < overall
        found.append(CategoryFigures(category=name or "(none)", figures=figures, weak=weak))
    return found


def _grades(folded: _Folded, seed: int, resamples: int) -> list[GradeFigures]:
    if "partially_supported" not in folded.grades:
        return []
    rows = []
    for grade in ("supported", "partially_supported", "not_supported"):
        index = np.array([i for i, g in enumerate(folded.grades) if g == grade])
        if index.size == 0:
            continue
        draws = _subset_draws(len(index), resamples, seed, f"grade:{grade}")
        figures = agreement(folded.claims.take(index), draws)
        rows.append(GradeFigures(grade=grade, claims=len(index), says_yes=figures.says_yes))
    return rows


def _sweep(judge: Judge, folded: _Folded, score_name: str | None) -> ThresholdSweep | None:
    claims = folded.claims
    if claims.score is None or score_name is None:
        return None
    operating = getattr(judge, "threshold", None)
    operating = float(operating) if isinstance(operating, int | float) else None
    points = sweep(claims.truth, claims.score, operating)
    best = max(points, key=lambda p: (p.kappa if p.kappa is not None else -2.0, -p.threshold))
    follows = operating is not None and bool(
        np.array_equal(claims.score >= operating, claims.verdict)
    )
    return ThresholdSweep(
        score=score_name,
        operating=operating,
        verdicts_follow_score=follows,
        best=best,
        points=points,
    )


def _compare(
    reference: Reference, folded: _Folded, seed: int, resamples: int
) -> ReferenceComparison:
    covered = [i for i, unit in enumerate(folded.units) if unit in reference.outputs]
    if not covered:
        example = next(iter(reference.outputs))
        raise InvalidInput(
            f"reference {reference.name}: none of its {len(reference.outputs)} ids is a claim "
            f"of the label set (its ids look like {example!r}, the set's like "
            f"{folded.units[0]!r})"
        )
    index = np.array(covered)
    values = [reference.outputs[folded.units[i]] for i in covered]
    ours = folded.claims.take(index)
    theirs = Claims(
        ours.truth,
        np.array([reference.verdict(v) for v in values], dtype=bool),
        np.array(values, dtype=float) if reference.scored else None,
    )
    draws = _subset_draws(len(index), resamples, seed, f"reference:{reference.name}")
    both_scored = ours.score is not None and theirs.score is not None
    return ReferenceComparison(
        name=reference.name,
        file=reference.file,
        sha256=reference.sha256,
        threshold=reference.threshold if reference.scored else None,
        claims=len(index),
        not_in_labels=len(set(reference.outputs) - set(folded.units)),
        reference=agreement(theirs, draws),
        judge=agreement(ours, draws),
        kappa_difference=difference(ours, theirs, draws, "kappa"),
        auc_difference=difference(ours, theirs, draws, "auc") if both_scored else None,
    )


def _notes(card: JudgeCard) -> list[str]:
    labels, notes = card.labels, [f"IN SAMPLE: {card.in_sample}"] if card.in_sample else []
    if labels.provenance:
        notes.append(f"{labels.name}: {labels.provenance}.")
    notes.append(f"Labels read as: {labels.mapping_text()}.")
    if labels.best_over_chunks:
        notes.append(
            f"{labels.pairs} pairs of {labels.claims} claims: a claim's verdict is the best over "
            "its pairs (yes when any is; its highest score), as WiCE scores its oracle chunks."
        )
    if card.judge.score == "overlap":
        notes.append(
            "The lexical judge gives no probability: its word overlap (the share of the "
            "claim's content words found in the evidence), which its threshold applies to, "
            "serves as its score for the AUC and the threshold sweep."
        )
    elif card.judge.score is None:
        notes.append("The judge gives verdicts only: no AUC and no threshold sweep.")
    if card.threshold is not None:
        notes.append(
            f"The κ-best threshold ({card.threshold.best.threshold:.3g}) was chosen on these "
            "very labels: its figures are optimistic."
        )
    if card.references:
        notes.append(
            "Each reference is measured on the claims its outputs cover, with this judge's "
            "figures on the same claims beside it (same resamples: paired differences)."
        )
    notes.append(
        "ALCE's published agreement is on ALCE's own data (ASQA/ELI5 answers), not on this "
        "set: a reference point, not a like-for-like comparison."
    )
    return notes
