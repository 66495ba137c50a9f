"""A trained offline support judge: a small logistic regression over lexical features.

:class:`TrainedLexicalJudge` reads the statement and the evidence as a lexical judge does
(NFKC, case-folded words, a light suffix stripper, en/de/fr function words dropped) and turns
them into a few features (:data:`FEATURES`): how much of the statement the evidence covers,
how many of its names and numbers the evidence lacks, whether its neighbouring words occur
near each other in one evidence sentence, whether its negation matches the closest evidence
sentence. A logistic regression, trained on human labels (WiCE's dev split) and on citelab's
own labelled set by ``scripts/train_support_judge.py``, maps them to the probability that
people would call the statement *fully* supported. The parameters, their provenance and
their licence notes live in ``data/support_model.json`` beside this file.

Evidence is one string (the citation scorers join cited passages with line breaks); the
judge splits it into sentences itself: at line breaks, and at sentence ends within a line.
Everything a call reads is cached per statement, per evidence line and per call, so the
scorers' many calls about the same passages cost little.

Text in scripts written without spaces (Chinese, Japanese, Thai) is compared by character
pairs, since it has no words to split; other scripts are split at ``\\w`` runs like Latin
text. Capitals mark names only where capitals do (not in German, where every noun has one).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from citelab._errors import ConfigError, InvalidInput
from citelab._lexicon import SUPPORT_FUNCTION_WORDS, stem_once
from citelab.contract import MARKER_TEXT
from citelab.evals.judges._training_data import read_fingerprint

__all__ = [
    "DEFAULT_MODEL",
    "FEATURES",
    "FEATURES_VERSION",
    "SupportModel",
    "TrainedLexicalJudge",
    "support_features",
]

DEFAULT_MODEL = Path(__file__).with_name("data") / "support_model.json"
MODEL_FORMAT = "citelab-support-model/1"
#: Bumped whenever the features change: a parameter file trained on other features is refused.
FEATURES_VERSION = 1

#: Every feature the extractor computes; a parameter file uses some of them, by name.
FEATURES = (
    "coverage",  # share of the statement's content terms found anywhere in the evidence
    "best_sentence_coverage",  # the same share, for the one evidence sentence covering most
    "missing_names",  # the statement's capitalised terms found nowhere in the evidence
    "missing_numbers",  # the statement's numbers found nowhere in the evidence
    "pair_coverage",  # share of neighbouring term pairs found near each other in a sentence
    # 1 when the statement and the sentence covering most of it differ in negation, and that
    # sentence covers at least _NEAR_COPY of it: "fees are not due" against "fees are due".
    # Further apart, a negation word says little (WiCE: "not allowed" against "abstinence").
    "negation_mismatch",
    "log_terms",  # log(1 + number of the statement's content terms)
    "missing_words_share",  # share of its other (not name, not number) terms not found
)

# Negations are tracked apart from the function words (see SUPPORT_FUNCTION_WORDS): "fees are
# not due" must not read as "fees are due".
_NEGATION_TEXT = """
    not no never none nor without cannot nobody nothing neither n't nicht kein keine keinen
    keiner keinem keines nie niemals ohne nichts ne pas jamais aucun aucune sans rien
"""
_NEGATIONS = frozenset(_NEGATION_TEXT.split())
# Small numbers written out, read as the digits ("three" meets "3"). Not "one"/"un"/"ein":
# they are also pronouns and articles.
_NUMBER_WORDS = {
    word: str(value)
    for words in (
        "two three four five six seven eight nine ten eleven twelve",
        "zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
        "deux trois quatre cinq six sept huit neuf dix onze douze",
    )
    for value, word in enumerate(words.split(), start=2)
}
# Function words only German has among the three: a statement mostly in German gets no
# "name" terms from its capitals (German capitalises every noun).
_GERMAN_TEXT = "der die das den dem des und ist sind nicht ein eine einen mit von zu"
_ENGLISH_OR_FRENCH_TEXT = "the and is are of to with le la les et est sont un une"
_GERMAN = frozenset(_GERMAN_TEXT.split())
_ENGLISH_OR_FRENCH = frozenset(_ENGLISH_OR_FRENCH_TEXT.split())

# One pass over a text: numbers (with their separators), "n't", words, and the stops that may
# end a sentence (.!?) or a clause (;:).
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|n't|\w+|[.!?]+|[;:]")
_LEADING_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_NO_SPACE_SCRIPT = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)
# A stop does not end a sentence after a single letter ("J. Smith") or these abbreviations.
_ABBREVIATIONS = frozenset(
    ["dr", "mr", "mrs", "ms", "st", "jr", "sr", "prof", "no", "vs", "etc", "inc", "ltd", "co"]
)
_CLAUSE_WORDS = frozenset(["but", "whereas", "while", "aber", "jedoch", "mais"])
_NEAR_COPY = 0.8
_MARGIN = 1e-9  # log-odds: far more than the rounding of a few sums of products
_PAIR_WINDOW = 3  # a statement's neighbouring terms count as "near" within 3 terms


def _number(token: str) -> str:
    """A number as one spelling: "1,000" → "1000", "3,5" → "3.5", "19th" → "19", "08" → "8"."""
    match = _LEADING_NUMBER.match(token)
    text = match.group(0) if match else token
    text = text.replace(",", "") if _THOUSANDS.fullmatch(text) else text.replace(",", ".")
    whole, dot, fraction = text.partition(".")
    return (whole.lstrip("0") or "0") + (dot + fraction.rstrip("0") if fraction.strip("0") else "")


# What a token is, by its exact spelling (the kinds below), memoized: texts repeat words.
_STOP, _CLAUSE, _NEGATION, _SKIP, _NUMBER, _NAME, _WORD = range(7)


@lru_cache(maxsize=262_144)
def _token(token: str) -> tuple[int, str]:
    """(kind, key): the key is what matching compares, a stem or "#" and a number; for a
    function word, the word (the statement reader counts the German ones)."""
    first = token[0]
    if first in ".!?":
        return _STOP, ""
    if first in ";:":
        return _CLAUSE, ""
    folded = token.casefold()
    if folded in _NEGATIONS:
        return _NEGATION, ""
    if folded in _CLAUSE_WORDS:
        return _CLAUSE, ""
    if folded in SUPPORT_FUNCTION_WORDS or (
        len(token) == 1 and token.isascii() and token.islower()
    ):
        return _SKIP, folded  # lower-case single letters: elisions (l', d'), the "s" of "'s"
    if first.isdigit():
        return _NUMBER, "#" + _number(folded)
    if folded in _NUMBER_WORDS:
        return _NUMBER, "#" + _NUMBER_WORDS[folded]
    return (_NAME if first.isupper() else _WORD), stem_once(folded)


def _tokens(text: str) -> list[str]:
    if "[" in text:
        text = MARKER_TEXT.sub(" ", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("’", "'")
    if "'" in text:
        text = text.replace("n't", " n't")
    tokens = _TOKEN.findall(text)
    if text.isascii() or not _NO_SPACE_SCRIPT.search(text):
        return tokens
    out: list[str] = []
    for token in tokens:  # no spaces between words: compare overlapping character pairs
        runs = _NO_SPACE_SCRIPT.findall(token)
        out.extend(run[i : i + 2] for run in runs for i in range(max(1, len(run) - 1)))
        rest = _NO_SPACE_SCRIPT.sub("", token) if runs else token
        if rest:
            out.append(rest)
    return out


# The texts as read are named tuples: built once per text and read on every call, where a
# frozen dataclass's slower construction would show.
class _Statement(NamedTuple):
    """A statement as the features read it: its terms by kind and its neighbouring pairs (no
    sentences or clauses: only evidence is read for those)."""

    keys: frozenset[str]  # distinct terms
    names: frozenset[str]
    numbers: frozenset[str]
    words: frozenset[str]
    pairs: tuple[tuple[str, str], ...]  # neighbouring distinct terms
    negated: bool
    log_terms: float  # log(1 + number of distinct terms)


# The per-text memos hold the last few hundred answers' statements and passages (see
# _judges._content_terms: bigger ones win nothing and cost time at the interpreter's exit);
# the per-token ones hold a vocabulary.
@lru_cache(maxsize=4096)
def _statement(text: str) -> _Statement:
    keys: list[str] = []
    names: set[str] = set()
    numbers: set[str] = set()
    negated = False
    german = 0  # German function words less English and French ones
    for kind, key in map(_token, _tokens(text)):
        if kind >= _NUMBER:
            keys.append(key)
            if kind == _NAME:
                names.add(key)
            elif kind == _NUMBER:
                numbers.add(key)
        elif kind == _SKIP:
            german += (key in _GERMAN) - (key in _ENGLISH_OR_FRENCH)
        elif kind == _NEGATION:
            negated = True
    distinct = frozenset(keys)
    if german > 0:
        names.clear()  # German capitalises every noun
    return _Statement(
        keys=distinct,
        names=frozenset(names),
        numbers=frozenset(numbers),
        words=distinct.difference(names, numbers),  # a term capitalised anywhere is a name
        pairs=tuple(pair for pair in itertools.pairwise(keys) if pair[0] != pair[1]),
        negated=negated,
        log_terms=math.log1p(len(distinct)),
    )


# The key :func:`_key` gives a negation word: no term can be it (terms are word characters,
# numbers or character pairs of the scripts written without spaces).
_NEGATED = "¬"


@lru_cache(maxsize=262_144)
def _key(token: str) -> str:
    """The term key of a token; _NEGATED for a negation word, "" for what is no term (a stop,
    a function word)."""
    kind, key = _token(token)
    if kind == _NEGATION:
        return _NEGATED
    return key if kind >= _NUMBER else ""


class _Line(NamedTuple):
    """One line of evidence, read cheaply: its terms and whether it holds a negation word.
    Its sentences and term positions (:func:`_detail`) are read only when needed."""

    raw: str
    keys: frozenset[str]
    negated: bool


@lru_cache(maxsize=4096)
def _line(text: str) -> _Line:
    keys = frozenset(map(_key, _tokens(text)))
    return _Line(text, keys.difference(("", _NEGATED)), _NEGATED in keys)


class _Passage(NamedTuple):
    """Evidence as the scorers pass it (one passage, or passages joined by line breaks): its
    lines, and what the cheap features need of them together."""

    lines: tuple[_Line, ...]
    keys: frozenset[str]  # every line's terms
    negated: bool  # some line holds a negation word


@lru_cache(maxsize=4096)  # passages recur in ever new combinations: each one read once
def _passage(text: str) -> _Passage:
    if "\n" not in text:
        line = _line(text)
        return _Passage((line,), line.keys, line.negated)
    lines = tuple(map(_line, text.split("\n")))
    keys = frozenset().union(*[line.keys for line in lines])
    return _Passage(lines, keys, any(line.negated for line in lines))


@dataclass(frozen=True)
class _Text:
    """A line as the sentence-level features read it: its terms in order, the sentence and
    clause of each, and which clauses hold a negation."""

    keys: tuple[str, ...]
    sentence: tuple[int, ...]  # the sentence number of each term
    clause: tuple[int, ...]  # the clause number of each term
    negated: frozenset[int]  # clause numbers with a negation word


def _read(text: str) -> _Text:
    keys: list[str] = []
    sentences: list[int] = []
    clauses: list[int] = []
    negated: set[int] = set()
    sentence = clause = 0
    stop = previous = ""
    for token in _tokens(text):
        kind, key = _token(token)
        if kind == _STOP:
            stop = previous
            continue
        if stop and _ends_sentence(stop, token):
            sentence += 1
            clause += 1
        stop, previous = "", token
        if kind == _CLAUSE:
            clause += 1
        elif kind == _NEGATION:
            negated.add(clause)
        elif kind >= _NUMBER:
            keys.append(key)
            sentences.append(sentence)
            clauses.append(clause)
    return _Text(tuple(keys), tuple(sentences), tuple(clauses), frozenset(negated))


def _ends_sentence(before: str, after: str) -> bool:
    """A stop between ``before`` and ``after`` ends a sentence: a capital or digit follows,
    and ``before`` is no initial ("J.") or common abbreviation ("Dr.")."""
    if not (after[0].isupper() or after[0].isdigit()):
        return False
    return not (len(before) == 1 and before.isalpha()) and before.casefold() not in _ABBREVIATIONS


@dataclass(frozen=True)
class _Detail:
    text: _Text
    where: dict[str, tuple[int, ...]]  # term → its positions


@lru_cache(maxsize=4096)
def _detail(text: str) -> _Detail:
    read = _read(text)
    where: dict[str, list[int]] = {}
    for position, key in enumerate(read.keys):
        where.setdefault(key, []).append(position)
    return _Detail(read, {k: tuple(v) for k, v in where.items()})


def _near(line: _Line, first: str, second: str) -> bool:
    """Whether the two terms occur within _PAIR_WINDOW terms of each other in one sentence."""
    detail = _detail(line.raw)
    sentence = detail.text.sentence
    for i in detail.where[first]:
        for j in detail.where[second]:
            if abs(i - j) <= _PAIR_WINDOW and sentence[i] == sentence[j]:
                return True
    return False


def support_features(statement: str, evidence: str) -> dict[str, float]:
    """Every feature of :data:`FEATURES` for one statement and its evidence."""
    claim = _statement(_checked(statement, "statement"))
    passages = [_passage(_checked(evidence, "evidence"))]
    missing = _missing(claim, passages)
    values = _cheap_features(claim, missing)
    _add_costly(values, claim, passages, missing, _COSTLY)
    return dict(zip(FEATURES, values, strict=True))


def _checked(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"support judge: {what} must be a string, got {type(value).__name__}")
    return value


# The features read from the evidence's sentences (term positions, clauses): the costly ones.
# The others come from term sets alone.
_COSTLY = frozenset(["best_sentence_coverage", "pair_coverage", "negation_mismatch"])


def _missing(claim: _Statement, passages: Sequence[_Passage]) -> frozenset[str]:
    """The statement's terms that no passage holds."""
    return claim.keys.difference(*[passage.keys for passage in passages])


# The features of a statement without terms: there is nothing to check.
_NOTHING = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def _cheap_features(claim: _Statement, missing: frozenset[str]) -> list[float]:
    """The features in :data:`FEATURES` order, the costly ones NaN (see :func:`_add_costly`),
    given the statement's ``missing`` terms."""
    size = len(claim.keys)
    if not size:
        return list(_NOTHING)
    return [
        (size - len(missing)) / size,
        math.nan,
        float(len(claim.names & missing)),
        float(len(claim.numbers & missing)),
        math.nan,
        math.nan,
        claim.log_terms,
        len(claim.words & missing) / len(claim.words) if claim.words else 0.0,
    ]


def _add_costly(
    values: list[float],
    claim: _Statement,
    passages: Sequence[_Passage],
    missing: frozenset[str],
    names: Collection[str],
) -> None:
    """Fill in the costly features ``names`` (the others stay as they are)."""
    if not claim.keys:
        return
    size = len(claim.keys)
    lines = [line for passage in passages for line in passage.lines]
    found = claim.keys - missing
    if "pair_coverage" in names:
        values[_INDEX["pair_coverage"]] = _pair_share(claim, lines, found)
    negation = "negation_mismatch" in names and _may_mismatch(claim, passages, missing)
    if "best_sentence_coverage" in names or negation:
        best, negated = _best_sentence(found, lines)
        values[_INDEX["best_sentence_coverage"]] = best / size
        values[_INDEX["negation_mismatch"]] = float(
            best >= _NEAR_COPY * size and claim.negated != negated
        )
    if "negation_mismatch" in names and not negation:
        values[_INDEX["negation_mismatch"]] = 0.0


def _may_mismatch(claim: _Statement, passages: Sequence[_Passage], missing: frozenset[str]) -> bool:
    """Whether negation_mismatch can be 1: enough of the statement found for one sentence to
    hold _NEAR_COPY of it (no sentence holds more than all of them), and a negation word on
    some side."""
    size = len(claim.keys)
    if size - len(missing) < _NEAR_COPY * size:
        return False
    return claim.negated or any(passage.negated for passage in passages)


def _pair_share(claim: _Statement, lines: Sequence[_Line], found: frozenset[str]) -> float:
    if not claim.pairs:
        return len(found) / len(claim.keys)
    near = sum(
        any(a in line.keys and b in line.keys and _near(line, a, b) for line in lines)
        for a, b in claim.pairs
    )
    return near / len(claim.pairs)


def _best_sentence(found: frozenset[str], lines: Sequence[_Line]) -> tuple[int, bool]:
    """The most terms of ``found`` one sentence holds, and whether the clause of that sentence
    holding most of them is negated (the first sentence and clause on ties): a negation reaches
    as far as its clause ("graduates do not pay; undergraduates pay 20 euros")."""
    best, negated = -1, False
    for line in lines:
        text = _detail(line.raw).text
        sentences: dict[int, set[str]] = {}
        clauses: dict[int, set[str]] = {}
        for key, sentence, clause in zip(text.keys, text.sentence, text.clause, strict=True):
            if key in found:
                sentences.setdefault(sentence, set()).add(key)
                clauses.setdefault(clause, set()).add(key)
        for sentence in sorted(set(text.sentence)) or [0]:
            overlap = len(sentences.get(sentence, ()))
            if overlap > best:
                best = overlap
                members = sorted(
                    {c for c, s in zip(text.clause, text.sentence, strict=True) if s == sentence}
                )
                top = max(members, key=lambda c: len(clauses.get(c, ())), default=-1)
                negated = top in text.negated
    return max(best, 0), negated


@dataclass(frozen=True)
class SupportModel:
    """The trained parameters: a logistic regression over standardised features."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    digest: str  # sha256 of the parameter file, so a run's log names the exact parameters
    document: Mapping[str, Any] = field(repr=False)  # the whole file: provenance, figures
    training_keys: frozenset[str] = field(default=frozenset(), repr=False)
    """The keys of the claims it was trained on (``<stem>.training.json`` beside the file;
    :func:`~citelab.evals.judges._training_data.claim_key`); empty when it has none."""

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> SupportModel:
        return _load_model(str(path))

    @classmethod
    def from_document(cls, document: Mapping[str, Any], digest: str, where: str) -> SupportModel:
        """Check a parsed parameter file (``where`` names it in errors) and build the model."""
        if document.get("format") != MODEL_FORMAT:
            raise ConfigError(
                f"{where}: format must be {MODEL_FORMAT!r}, got {document.get('format')!r}"
            )
        if document.get("features_version") != FEATURES_VERSION:
            raise ConfigError(
                f"{where}: trained on features version {document.get('features_version')!r}, "
                f"this citelab computes version {FEATURES_VERSION}: retrain it "
                "(scripts/train_support_judge.py)"
            )
        names = _field(document, "features", list, where)
        unknown = [n for n in names if n not in FEATURES]
        if not names or unknown or len(set(names)) != len(names):
            raise ConfigError(
                f"{where}: features must name distinct ones of {list(FEATURES)}, got {names}"
            )
        mean, scale, coef = (
            _vector(document, k, len(names), where) for k in ("mean", "scale", "coef")
        )
        if not all(value > 0 for value in scale):
            raise ConfigError(f"{where}: scale must be positive numbers, got {list(scale)}")
        threshold = float(_field(document, "threshold", (int, float), where))
        if not 0.0 < threshold < 1.0:
            raise ConfigError(f"{where}: threshold must be in (0, 1), got {threshold}")
        intercept = float(_field(document, "intercept", (int, float), where))
        if not math.isfinite(intercept):
            raise ConfigError(f"{where}: intercept must be a finite number, got {intercept}")
        return cls(tuple(names), mean, scale, coef, intercept, threshold, digest, document)

    def logit(self, values: Mapping[str, float] | Sequence[float]) -> float:
        """The model's log-odds for the features (by name, or all of :data:`FEATURES` in order)."""
        if isinstance(values, Mapping):
            values = [values[name] for name in FEATURES]
        total = self.intercept
        # Plain floats: a few features per call, where numpy's per-call cost would dominate.
        for name, mean, scale, coef in zip(
            self.features, self.mean, self.scale, self.coef, strict=True
        ):
            total += coef * (values[_INDEX[name]] - mean) / scale
        return total

    def probability(self, values: Mapping[str, float] | Sequence[float]) -> float:
        """P(fully supported) for the features (by name, or all of :data:`FEATURES` in order)."""
        logit = self.logit(values)
        return 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0


_INDEX = {name: index for index, name in enumerate(FEATURES)}
_BEST, _PAIRS, _MISMATCH = (
    _INDEX[name] for name in ("best_sentence_coverage", "pair_coverage", "negation_mismatch")
)


def _field(document: Mapping[str, Any], key: str, kind: Any, where: str) -> Any:
    if key not in document:
        raise ConfigError(f"{where}: missing key {key!r}")
    value = document[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigError(f"{where}: {key} has the wrong type ({type(value).__name__})")
    return value


def _vector(document: Mapping[str, Any], key: str, size: int, where: str) -> tuple[float, ...]:
    values = _field(document, key, list, where)
    if len(values) != size or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        raise ConfigError(
            f"{where}: {key} must be {size} finite numbers (one per feature), got {values}"
        )
    return tuple(float(v) for v in values)


@lru_cache(maxsize=8)
def _load_model(path: str) -> SupportModel:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"support model {path}: cannot read it: {exc}") from exc
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"support model {path}: not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"support model {path}: must be a JSON object")
    digest = hashlib.sha256(raw).hexdigest()[:16]
    model = SupportModel.from_document(document, digest, f"support model {path}")
    return replace(model, training_keys=read_fingerprint(Path(path), digest))


class TrainedLexicalJudge:
    """Offline, deterministic: a calibrated probability that people call the statement supported.

    :meth:`score` is that probability (a logistic regression over :func:`support_features`,
    trained on WiCE's dev split and citelab's own labelled set); :meth:`supports` is
    ``score >= threshold``, the threshold chosen by cross-validation. ``model`` is a parameter
    file (default: the one shipped with citelab); ``digest``, when given, must match it, so a
    run's log rebuilds the judge with the parameters it was made with.
    """

    name = "lexical_trained"

    def __init__(
        self,
        threshold: float | None = None,
        model: str | None = None,
        digest: str | None = None,
    ) -> None:
        self.model = model
        self.parameters = SupportModel.load(model if model is not None else DEFAULT_MODEL)
        if digest is not None and digest != self.parameters.digest:
            raise ConfigError(
                f"judge {self.name}: parameters {self.parameters.digest} differ from the "
                f"{digest} asked for (the run was judged with another parameter file)"
            )
        if threshold is not None and not 0.0 < threshold < 1.0:
            raise ConfigError(f"judge {self.name}: threshold must be in (0, 1), got {threshold}")
        self.threshold = self.parameters.threshold if threshold is None else threshold
        # The model as an offset and one weight per feature of FEATURES (0 for those it does
        # not use; what standardising folds into), and the threshold as log-odds: supports()
        # adds up what the cheap features say and reads the costly ones only when what they
        # can add leaves the verdict open.
        fitted = self.parameters
        weights = dict.fromkeys(FEATURES, 0.0)
        offset = [fitted.intercept]
        for name, mean, scale, coef in zip(
            fitted.features, fitted.mean, fitted.scale, fitted.coef, strict=True
        ):
            weights[name] = coef / scale
            offset.append(-coef * mean / scale)
        self._weights = tuple(weights.values())
        # What a feature lying in [0, x] adds to the log-odds at least and at most, per unit of x.
        self._least = tuple(min(weight, 0.0) for weight in self._weights)
        self._most = tuple(max(weight, 0.0) for weight in self._weights)
        self._offset = math.fsum(offset)
        self._cutoff = math.log(self.threshold / (1.0 - self.threshold))
        self._costly = _COSTLY.intersection(fitted.features)

    def supports(self, statement: str, evidence: str) -> bool:
        return self.supports_passages(statement, [evidence])

    def score(self, statement: str, evidence: str) -> float:
        """P(fully supported), calibrated on the training data (one statement, one evidence)."""
        claim = _statement(_checked(statement, "statement"))
        passages = [_passage(_checked(evidence, "evidence"))]
        missing = _missing(claim, passages)
        values = _cheap_features(claim, missing)
        _add_costly(values, claim, passages, missing, self._costly)
        return self.parameters.probability(values)

    def supports_passages(self, statement: str, passages: Sequence[str]) -> bool:
        """``supports(statement, "\n".join(passages))``, without joining them (the citation
        scorers ask about the same passages in ever new combinations)."""
        read = [_passage(_checked(passage, "passage")) for passage in passages]
        return self._supported(_statement(_checked(statement, "statement")), read)

    def _supported(self, claim: _Statement, passages: Sequence[_Passage]) -> bool:
        """``score >= threshold``, reading the costly features only when they may change it."""
        if not claim.keys:
            return self.parameters.probability(_NOTHING) >= self.threshold
        missing = _missing(claim, passages)
        coverage, _, names, numbers, pairs, mismatch, log_terms, words = self._weights
        size = len(claim.keys)
        share = (size - len(missing)) / size
        logit = (
            self._offset
            + coverage * share
            + names * len(claim.names & missing)
            + numbers * len(claim.numbers & missing)
            + log_terms * claim.log_terms
            + words * (len(claim.words & missing) / len(claim.words) if claim.words else 0.0)
        )
        # What the costly features can add: one sentence holds at most what the evidence
        # holds; the pair share lies in [0, 1] (it is the coverage when there are no pairs);
        # the negation flag is 0 unless _may_mismatch.
        least, most = self._least, self._most
        low = logit + least[_BEST] * share
        high = logit + most[_BEST] * share
        if claim.pairs:
            low, high = low + least[_PAIRS], high + most[_PAIRS]
        else:
            low, high = low + pairs * share, high + pairs * share
        if mismatch and _may_mismatch(claim, passages, missing):
            low, high = low + least[_MISMATCH], high + most[_MISMATCH]
        # Further from the threshold than rounding can reach, the range decides; nearer, the
        # score itself (computed as score() computes it), so the verdict is always score()'s.
        if low > self._cutoff + _MARGIN:
            return True
        if high < self._cutoff - _MARGIN:
            return False
        values = _cheap_features(claim, missing)
        _add_costly(values, claim, passages, missing, self._costly)
        return self.parameters.probability(values) >= self.threshold

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "threshold": self.threshold,
            "model": self.model,
            "digest": self.parameters.digest,
        }
