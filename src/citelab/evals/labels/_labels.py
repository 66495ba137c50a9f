"""Human support labels: one reader for every labelled set a judge is checked against.

A labelled set is pairs of (claim, evidence, label), read into :class:`LabelledPair` s with
:func:`load_label_set`, from:

* **JSON Lines or CSV** with named columns (:class:`LabelColumns`: ``claim``, ``evidence``,
  ``label``, ``id``, ``category`` by default). citelab's own set and the labelling widget's
  files are such JSON Lines::

      {"id": "g01-1", "claim": "...", "evidence": ["passage", ...], "label": "supported",
       "category": "numbers", "origin": {...}}

  ``evidence`` is one string or a list of passages (in a CSV cell: plain text, or a JSON
  array of strings). A JSON Lines column may be a dotted path (``meta.id``). A row without
  an id is named by its line. A citelab file may give ``claim_id``: pairs sharing one are
  judged together, as WiCE's chunks are.
* **WiCE** (Kamoi et al., EMNLP 2023): its *claim* files (``claim``, the cited article's
  ``evidence`` sentences, ``supporting_sentences``, ``label``, ``meta.id``; the pair is the
  claim against its whole evidence) and its *oracle-chunk* files (several rows per claim id,
  ``meta.chunk_idx``/``meta.oracle_idx``; WiCE's protocol: a claim's verdict is the best over
  its chunks). Which of the two a file is, is read from its rows and said.
* **ALCE's human-eval citation file** (:mod:`citelab.evals.labels._calibrate_alce`).

Labels are booleans, 0/1, or three-way (``supported`` / ``partially_supported`` /
``not_supported``, and common spellings: ``partial``, ``unsupported``, ``yes``/``no``…).
The question asked is "fully supported?": ``supported`` is yes, ``not_supported`` no, and
``partially_supported`` no by default (``partial_as``: ``yes``, ``no`` or ``skip``); the
mapping travels with the set (:class:`LabelSource`) so every figure says how it was made.
Rows labelled ``skip`` are left out and counted. Other spellings are read through a
``label_map`` (``{"attributable": "supported", "not attributable": "not_supported"}``, the
CLI's ``--label-map``; :func:`parse_label_map`), so a file is read as its authors wrote it.
CSV cells may be of any size. A bad row is an :class:`InvalidInput` naming the file, the line
and the field (every problem at once).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citelab._errors import InvalidInput
from citelab._jsonl import json_lines
from citelab._paths import fixtures_dir
from citelab.evals.labels._calibrate_alce import is_alce_human_eval, load_alce_human_eval

__all__ = [
    "DEFAULT_LABELS",
    "LABEL_FORMATS",
    "PARTIAL_AS",
    "Grade",
    "LabelColumns",
    "LabelFormat",
    "LabelSet",
    "LabelSource",
    "LabelledPair",
    "PartialAs",
    "grade_of",
    "load_label_set",
    "parse_label_map",
    "stratum_shares",
]

LabelFormat = Literal["auto", "jsonl", "csv", "wice", "alce"]
LABEL_FORMATS: tuple[LabelFormat, ...] = ("auto", "jsonl", "csv", "wice", "alce")
PartialAs = Literal["no", "yes", "skip"]
PARTIAL_AS: tuple[PartialAs, ...] = ("no", "yes", "skip")
Grade = Literal["supported", "partially_supported", "not_supported"]

DEFAULT_LABELS = "judges/support_labels.jsonl"
"""citelab's own labelled set, relative to the fixtures folder."""

_OWN_SET = (
    "written and labelled by citelab's developers (not independent human labels); "
    "the default judge (lexical_trained) was trained on it, so figures on it are in-distribution"
)
_WICE = (
    "WiCE (Kamoi, Goyal, Rodriguez, Durrett; EMNLP 2023), labelled by people; annotations "
    "ODC-BY 1.0, text from Wikipedia (CC BY-SA) and Common Crawl"
)
_ALCE = "ALCE's human evaluation of citations (Gao et al. 2023), labelled by people"

# Spellings of the three grades (and skip), compared case-folded with spaces and dashes as "_".
_SPELLINGS: dict[str, Grade | Literal["skip"]] = {
    **dict.fromkeys(
        ("supported", "fully_supported", "full", "full_support", "yes", "y", "true", "1"),
        "supported",
    ),
    **dict.fromkeys(
        (
            "partially_supported",
            "partial",
            "partly",
            "partly_supported",
            "partial_support",
            "partially",
        ),
        "partially_supported",
    ),
    **dict.fromkeys(
        ("not_supported", "unsupported", "no_support", "none", "no", "n", "false", "0"),
        "not_supported",
    ),
    **dict.fromkeys(("skip", "skipped"), "skip"),
}


class LabelledPair(BaseModel):
    """One human support decision: does ``evidence`` fully support ``claim``?"""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    claim: str
    evidence: list[str]
    """The passages, in order (joined by line breaks for the judge)."""
    label: bool
    """Fully supported (after the set's mapping of three-way labels)."""
    category: str = ""
    """What the pair probes (paraphrase, negation, numbers…), for per-category figures."""
    claim_id: str = ""
    """The claim the pair belongs to, when several pairs are one claim's (WiCE's oracle
    chunks): the claim's verdict is the best over them. Empty: the pair is its own claim."""
    grade: Grade | None = None
    """The label as written, on the three-way scale (None when the set gave none)."""
    probability: float | None = Field(default=None, gt=0.0, le=1.0)
    """The chance the labelling design drew this pair (a labels file's
    ``origin.sampling.probability``); None: drawn uniformly. Estimates weigh a label by
    its inverse."""
    stratum: str = ""
    """The design's stratum of the pair (``origin.sampling.stratum``); empty: none."""
    stratum_size: int | None = Field(default=None, ge=1)
    """How many pairs the stratum holds (``origin.sampling.size``); None: not recorded (a
    file written before citelab recorded it). With it, a label's chance is its stratum's
    labelled share (:meth:`LabelSet.chances`)."""
    strata: int | None = Field(default=None, ge=1)
    """How many strata the design cut the stratum's population into
    (``origin.sampling.strata``; the population is what the stratum's name holds before its
    last ``/``: a variant and model, or the whole queue); None: not recorded. With it, a
    file whose labels leave a stratum unlabelled says so (:meth:`LabelSet.uncovered`)."""

    @field_validator("evidence", mode="before")
    @classmethod
    def _passages(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("label", mode="before")
    @classmethod
    def _binary(cls, value: Any) -> Any:
        if value in (0, 1) and not isinstance(value, bool):
            return bool(value)
        return value

    @property
    def unit(self) -> str:
        """The claim this pair is judged as part of (its ``claim_id``, else its ``id``)."""
        return self.claim_id or self.id


class LabelSource(BaseModel):
    """Where a labelled set came from and how its labels were read (kept in every card)."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The file's name, or ``citelab's own set``."""
    format: str
    """What the file was read as: ``jsonl``, ``csv``, ``wice-claims``,
    ``wice-oracle-chunks``, ``alce-human-eval``."""
    description: str
    """The format in words, with how pairs become claims."""
    provenance: str = ""
    """Who wrote and labelled the data, and its licence, when citelab knows it."""
    sha256: str = ""
    """Of the file's bytes."""
    pairs: int
    """Pairs read (after skips)."""
    claims: int
    """Claims judged (a claim's pairs are judged together)."""
    best_over_chunks: bool = False
    """A claim's verdict is the best over its pairs (any yes; its highest score)."""
    partial_as: PartialAs = "no"
    """What ``partially_supported`` counts as."""
    mapping: dict[str, str]
    """Each written grade → ``yes`` / ``no`` / ``left out``."""
    grades: dict[str, int] = {}
    """Claims per written grade (after skips)."""
    skipped: dict[str, int] = {}
    """Rows left out, by reason: ``skip`` (labelled skip), ``partially_supported``."""
    label_map: dict[str, str] = {}
    """Spellings of the file read as grades (the ``label_map`` given), written → grade."""

    def mapping_text(self) -> str:
        """The mapping and the rows it left out, in one line."""
        rules = " · ".join(f"{grade} → {to}" for grade, to in self.mapping.items())
        left = ", ".join(f"{count} {why}" for why, count in self.skipped.items() if count)
        spelled = " · ".join(f"{written!r} as {grade}" for written, grade in self.label_map.items())
        read = f"read {spelled}; " if spelled else ""
        return f"{read}{rules} (partial as {self.partial_as}); rows left out: {left or 'none'}"


@dataclass(frozen=True)
class LabelColumns:
    """Which field of a JSON Lines row (a dotted path) or CSV column holds what."""

    claim: str = "claim"
    evidence: str = "evidence"
    label: str = "label"
    id: str = "id"
    category: str = "category"
    claim_id: str = "claim_id"


@dataclass(frozen=True)
class LabelSet:
    """Labelled pairs and where they came from."""

    pairs: tuple[LabelledPair, ...]
    source: LabelSource

    @property
    def units(self) -> tuple[str, ...]:
        """The claims, in order of their first pair."""
        return tuple(dict.fromkeys(p.unit for p in self.pairs))

    def chances(self) -> dict[str, float | None]:
        """Each pair's chance of being labelled, by id (None: drawn uniformly). A pair whose
        stratum records its size: the stratum's labelled share in this set (within a
        stratum the design's labels are a prefix of the seed's random order, a simple random
        sample of it whatever its length, so a file stopped short of its sample, or with
        skipped pairs, stays unbiased); else the chance the file records for the whole
        sample."""
        out = {pair.id: pair.probability for pair in self.pairs}
        sized = [(p.id, p.stratum, p.stratum_size) for p in self.pairs
                 if p.stratum and p.stratum_size is not None]  # fmt: skip
        sizes: dict[str, int] = {}
        for _, stratum, size in sized:
            if sizes.setdefault(stratum, size) != size:
                raise InvalidInput(
                    f"labels {self.source.name}: stratum {stratum!r} is recorded with "
                    f"{sizes[stratum]} and with {size} pairs (origin.sampling.size): "
                    "labels of two queues in one file?"
                )
        shares = stratum_shares([stratum for _, stratum, _ in sized], sizes)
        out.update(zip((ident for ident, _, _ in sized), shares, strict=True))
        return out

    def uncovered(self) -> dict[str, tuple[int, int]]:
        """The design's populations some of whose strata no label of this set is in:
        population (:func:`population_of`) → (strata labelled, strata the design cut). An
        estimate from such a file is of its labelled strata's pairs only (a disagreement-first
        file stopped before any ``agree`` pair estimates the ``disagree`` pairs). Only labels
        that record ``origin.sampling.strata`` are looked at."""
        cut: dict[str, int] = {}
        seen: dict[str, set[str]] = {}
        for pair in self.pairs:
            if pair.stratum and pair.strata is not None:
                population = population_of(pair.stratum)
                cut[population] = max(cut.get(population, 0), pair.strata)
                seen.setdefault(population, set()).add(pair.stratum)
        return {name: (len(seen[name]), n) for name, n in cut.items() if len(seen[name]) < n}

    @classmethod
    def of(cls, pairs: Sequence[LabelledPair], name: str = "labelled pairs") -> LabelSet:
        """A set from pairs in memory (each its own claim unless it names one)."""
        if not pairs:
            raise InvalidInput(f"{name}: no labelled pairs")
        _check_claims(pairs, name)
        best = len({p.unit for p in pairs}) < len(pairs)
        return cls(
            tuple(pairs),
            _source(name, "pairs", "pairs given in Python", pairs, best_over_chunks=best),
        )


def population_of(stratum: str) -> str:
    """The population a design's stratum is part of: its name before the last ``/`` (a
    stratified design's ``variant/model/score-2-of-5`` is of ``variant/model``; the
    disagreement design's ``agree`` of the whole queue, ``""``)."""
    return stratum.rpartition("/")[0]


def stratum_shares(strata: Sequence[str], sizes: Mapping[str, int]) -> list[float]:
    """Each label's chance of being drawn, given its stratum (``strata``: one per label) and
    how many pairs each stratum holds: the stratum's labels over its pairs. An error when a
    stratum holds more labels than pairs."""
    counts = Counter(strata)
    over = next((name for name, n in counts.items() if n > sizes[name]), None)
    if over is not None:
        raise InvalidInput(
            f"stratum {over!r} has {counts[over]} labels but holds {sizes[over]} pairs "
            "(origin.sampling.size): labels of two queues in one file?"
        )
    return [counts[name] / sizes[name] for name in strata]


def grade_of(
    value: Any, label_map: Mapping[str, Grade | Literal["skip"]] | None = None
) -> Grade | Literal["skip"] | None:
    """The grade a label value means (None: not a label citelab knows). ``label_map``: a
    checked map (:func:`_checked_map`) of spelling keys, read before citelab's own."""
    if label_map and isinstance(value, str | int) and not isinstance(value, bool):
        mapped = label_map.get(_spelling_key(str(value)))
        if mapped is not None:
            return mapped
    if isinstance(value, bool):
        return "supported" if value else "not_supported"
    if isinstance(value, int | float) and value in (0, 1):
        return "supported" if value == 1 else "not_supported"
    if isinstance(value, str):
        return _SPELLINGS.get(_spelling_key(value))
    return None


def _spelling_key(text: str) -> str:
    return text.strip().casefold().replace("-", "_").replace(" ", "_")


def parse_label_map(entries: Iterable[str]) -> dict[str, str]:
    """A label map from ``--label-map`` values: each ``SPELLING=GRADE`` pairs, separated by
    commas (``'attributable=supported,not attributable=not_supported'``); checked as
    :func:`load_label_set` checks its ``label_map``."""
    out: dict[str, str] = {}
    for entry in entries:
        for item in entry.split(","):
            written, sep, grade = item.partition("=")
            if not sep or not written.strip() or not grade.strip():
                raise InvalidInput(
                    f"--label-map {entry!r}: {item.strip()!r} is not SPELLING=GRADE (e.g. "
                    "'attributable=supported,not attributable=not_supported')"
                )
            out[written.strip()] = grade.strip()
    _checked_map(out)
    return out


def _checked_map(label_map: Mapping[str, str] | None) -> dict[str, Grade | Literal["skip"]]:
    """Spelling key → grade; a target that is no grade, or a spelling mapped two ways, is an
    :class:`InvalidInput`."""
    checked: dict[str, Grade | Literal["skip"]] = {}
    written: dict[str, str] = {}
    for spelling, target in (label_map or {}).items():
        if not isinstance(spelling, str) or not spelling.strip():
            raise InvalidInput(f"label map: {spelling!r} is not a label spelling (non-empty text)")
        grade = grade_of(target) if isinstance(target, str) else None
        if grade is None:
            raise InvalidInput(
                f"label map: {spelling!r} → {target!r}: {target!r} is not a grade; map to "
                "supported, partially_supported, not_supported or skip"
            )
        key = _spelling_key(spelling)
        if checked.setdefault(key, grade) != grade:
            raise InvalidInput(
                f"label map: {spelling!r} and {written[key]!r} are one spelling mapped to both "
                f"{checked[key]} and {grade}"
            )
        written.setdefault(key, spelling)
    return checked


def load_label_set(
    path: str | Path | None = None,
    label_format: LabelFormat = "auto",
    *,
    partial_as: PartialAs = "no",
    columns: LabelColumns | None = None,
    label_map: Mapping[str, str] | None = None,
) -> LabelSet:
    """The labelled set of a file (citelab's own set when ``path`` is None); see the module
    docs for the formats. ``auto`` reads ``.json`` as ALCE's, ``.csv``/``.tsv`` as CSV, and a
    JSON Lines file as WiCE's when its rows are WiCE's, else by ``columns``. ``label_map``:
    the file's own spellings → grades (``{"attributable": "supported"}``; case, spaces and
    dashes do not matter), read before citelab's spellings."""
    if label_format not in LABEL_FORMATS:
        raise InvalidInput(
            f"unknown labels format {label_format!r}; choose one of {', '.join(LABEL_FORMATS)}"
        )
    if partial_as not in PARTIAL_AS:
        raise InvalidInput(f"partial_as must be one of {', '.join(PARTIAL_AS)}, got {partial_as!r}")
    target = Path(path) if path is not None else _default_labels()
    if not target.is_file():
        what = "a folder" if target.is_dir() else "not a file"
        raise InvalidInput(f"labels {target}: {what}; give a labels file")
    spellings = _checked_map(label_map)
    reader = _Reader(target, partial_as, columns or LabelColumns(), spellings)
    labelled = reader.read(_detect(target) if label_format == "auto" else label_format)
    if label_map:
        shown = {str(k): str(grade_of(v)) for k, v in label_map.items()}
        labelled = LabelSet(labelled.pairs, labelled.source.model_copy(update={"label_map": shown}))
    if path is None:
        labelled = LabelSet(
            labelled.pairs,
            labelled.source.model_copy(
                update={"name": "citelab's own set", "provenance": _OWN_SET}
            ),
        )
    return labelled


def _default_labels() -> Path:
    path = fixtures_dir() / DEFAULT_LABELS
    if not path.is_file():
        raise InvalidInput(f"citelab's labelled set is not installed here (looked for {path})")
    return path


def _detect(path: Path) -> LabelFormat:
    suffix = path.suffix.casefold()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix != ".jsonl" and is_alce_human_eval(path):
        return "alce"
    first = _first_object(path)
    return "wice" if first is not None and _wice_kind(first) is not None else "jsonl"


def _first_object(path: Path) -> dict[str, Any] | None:
    with path.open(encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if line.strip():
                try:
                    value = json.loads(line)
                except ValueError:
                    return None
                return value if isinstance(value, dict) else None
    return None


def _wice_kind(row: Mapping[str, Any]) -> Literal["claims", "oracle"] | None:
    meta = row.get("meta")
    if not isinstance(meta, dict) or "id" not in meta:
        return None
    if "chunk_idx" in meta or "oracle_idx" in meta:
        return "oracle"
    if "supporting_sentences" in row:
        return "claims"
    return None


class _Problems:
    """Every problem of a file, each naming its line and field."""

    shown = 20

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.lines.append(f"{self.path.name}:{where}: {problem}")

    def raise_any(self, what: str) -> None:
        if not self.lines:
            return
        more = len(self.lines) - self.shown
        listed = self.lines[: self.shown] + ([f"… and {more} more"] if more > 0 else [])
        raise InvalidInput(
            f"{what} {self.path} has {len(self.lines)} problem(s):\n" + "\n".join(listed)
        )


@dataclass
class _Reader:
    path: Path
    partial_as: PartialAs
    columns: LabelColumns
    label_map: Mapping[str, Grade | Literal["skip"]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)

    def read(self, label_format: LabelFormat) -> LabelSet:
        if label_format == "alce":
            return self._alce()
        if label_format == "csv":
            return self._rows(self._csv_rows(), "csv", "CSV, one pair a row")
        if label_format == "wice":
            return self._wice()
        return self._rows(self._jsonl_rows(), "jsonl", "JSON Lines, one pair a line")

    # --- the formats ---------------------------------------------------------------------

    def _alce(self) -> LabelSet:
        pairs: list[LabelledPair] = []
        for raw in load_alce_human_eval(self.path):
            label = self._label(raw.pop("grade"))
            if label is not None:
                pairs.append(LabelledPair.model_validate({**raw, **label}))
        description = (
            "ALCE human-eval citations: a recall pair per cited sentence (all its passages) "
            "and a pair per citation (rated 2 full, 1 partial, 0 none)"
        )
        return self._set(pairs, "alce-human-eval", description, _ALCE)

    def _wice(self) -> LabelSet:
        rows = list(self._jsonl_rows())
        kinds = {_wice_kind(row) for _, row in rows if isinstance(row, dict)}
        if None in kinds or not kinds:
            raise InvalidInput(
                f"{self.path}: not a WiCE file: its rows need meta.id and either "
                "supporting_sentences (claim files) or meta.chunk_idx (oracle-chunk files)"
            )
        if len(kinds) > 1:
            raise InvalidInput(f"{self.path}: mixes WiCE claim rows and oracle-chunk rows")
        oracle = kinds == {"oracle"}
        columns = LabelColumns(id="meta.id", category="", claim_id="meta.id" if oracle else "")
        pairs = self._pairs(rows, columns, number_chunks=oracle)
        if oracle:
            return self._set(
                pairs,
                "wice-oracle-chunks",
                "WiCE oracle chunks: several chunks (sentence lists) per claim; a claim's "
                "verdict is the best over its chunks",
                _WICE,
            )
        return self._set(
            pairs,
            "wice-claims",
            "WiCE claims: each claim against all the sentences of its cited article",
            _WICE,
        )

    def _rows(
        self, rows: Iterator[tuple[int, Any]], label_format: str, description: str
    ) -> LabelSet:
        pairs = self._pairs(list(rows), self.columns, number_chunks=False)
        return self._set(pairs, label_format, description, "")

    # --- rows ----------------------------------------------------------------------------

    def _jsonl_rows(self) -> Iterator[tuple[int, Any]]:
        rows, bad = json_lines(self._text().splitlines())
        problems = _Problems(self.path)
        for number, problem in bad:
            problems.add(str(number), problem)
        problems.raise_any("labels")
        return iter(rows)

    def _csv_rows(self) -> Iterator[tuple[int, Any]]:
        delimiter = "\t" if self.path.suffix.casefold() == ".tsv" else ","
        text = self._text()
        _allow_fields_of(len(text))
        reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise InvalidInput(f"labels {self.path}: empty (a CSV file needs a header row)")
        self._check_header(header)
        rows: list[tuple[int, Any]] = []
        start = reader.line_num + 1
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((start, _csv_row(header, cells)))
            start = reader.line_num + 1
        return iter(rows)

    def _check_header(self, header: list[str]) -> None:
        options = {"claim": "--claim-column", "evidence": "--evidence-column",
                   "label": "--label-column"}  # fmt: skip
        for role, option in options.items():
            name = getattr(self.columns, role)
            if name not in header:
                raise InvalidInput(
                    f"labels {self.path}: no column {name!r} for the {role} (columns: "
                    f"{', '.join(header)}); name it with {option}"
                )

    def _text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"cannot read labels {self.path}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"labels {self.path}: not UTF-8 text ({exc.reason})") from exc

    def _pairs(
        self, rows: Sequence[tuple[int, Any]], columns: LabelColumns, *, number_chunks: bool
    ) -> list[LabelledPair]:
        problems = _Problems(self.path)
        pairs: list[LabelledPair] = []
        first_line: dict[str, int] = {}
        chunks: Counter[str] = Counter()
        for number, row in rows:
            fields = _row_fields(row, columns, problems, number)
            if fields is None:
                continue
            label = self._label(fields.pop("label"), problems, number, columns.label)
            if label is None or fields.pop("invalid"):
                continue
            if number_chunks:
                unit = fields["claim_id"]
                fields["id"] = f"{unit}#{chunks[unit]}"
                chunks[unit] += 1
            seen = first_line.setdefault(fields["id"], number)
            if seen != number:
                problems.add(str(number), f"id {fields['id']!r} was already used on line {seen}")
                continue
            pairs.append(LabelledPair.model_validate({**fields, **label}))
        problems.raise_any("labels")
        return pairs

    def _label(
        self,
        value: Any,
        problems: _Problems | None = None,
        number: int = 0,
        column: str = "label",
    ) -> dict[str, Any] | None:
        """``{"label", "grade"}`` of a written label; None when the row is left out."""
        grade = grade_of(value, self.label_map)
        if grade is None:
            if problems is not None:
                problems.add(
                    str(number),
                    f"field {column}: {_shown(value)} is not a label (true/false, 0/1, "
                    "supported, partially_supported, not_supported or skip); map the file's "
                    f"own spelling with --label-map '{_plain_value(value)}=supported' "
                    "(label_map= in Python)",
                )
            return None
        if grade == "skip" or (grade == "partially_supported" and self.partial_as == "skip"):
            self.skipped[grade] += 1
            return None
        yes = grade == "supported" or (grade == "partially_supported" and self.partial_as == "yes")
        return {"label": yes, "grade": grade}

    def _set(
        self, pairs: list[LabelledPair], label_format: str, description: str, provenance: str
    ) -> LabelSet:
        if not pairs:
            raise InvalidInput(f"labels {self.path}: no labelled pairs (after skips)")
        _check_claims(pairs, self.path.name)
        best = len({p.unit for p in pairs}) < len(pairs)
        source = _source(
            self.path.name,
            label_format,
            description,
            pairs,
            best_over_chunks=best,
            partial_as=self.partial_as,
        )
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
        skipped = {"skip": self.skipped["skip"]}
        if self.partial_as == "skip":
            skipped["partially_supported"] = self.skipped["partially_supported"]
        update = {"provenance": provenance, "sha256": digest, "skipped": skipped}
        return LabelSet(tuple(pairs), source.model_copy(update=update))


def _source(
    name: str,
    label_format: str,
    description: str,
    pairs: Sequence[LabelledPair],
    *,
    best_over_chunks: bool,
    partial_as: PartialAs = "no",
) -> LabelSource:
    grades: Counter[str] = Counter()
    seen: set[str] = set()
    for pair in pairs:
        if pair.unit not in seen:
            seen.add(pair.unit)
            grades[pair.grade or ("supported" if pair.label else "not_supported")] += 1
    partial = {"no": "no", "yes": "yes", "skip": "left out"}[partial_as]
    return LabelSource(
        name=name,
        format=label_format,
        description=description,
        pairs=len(pairs),
        claims=len(seen),
        best_over_chunks=best_over_chunks,
        partial_as=partial_as,
        mapping={
            "supported": "yes",
            "partially_supported": partial,
            "not_supported": "no",
            "skip": "left out",
        },
        grades=dict(sorted(grades.items())),
    )


def _check_claims(pairs: Sequence[LabelledPair], name: str) -> None:
    """The pairs of one claim carry one label (the claim's)."""
    labels: dict[str, bool] = {}
    for pair in pairs:
        if labels.setdefault(pair.unit, pair.label) != pair.label:
            raise InvalidInput(
                f"labels {name}: claim {pair.unit!r} has pairs labelled both supported and not "
                f"(pair {pair.id!r}); the pairs of one claim share the claim's label"
            )


def _allow_fields_of(size: int) -> None:
    """Let the csv module read a field as large as the whole text (its default limit, 131,072
    characters, is below a web page's). The limit is process-wide: it is only ever raised."""
    if size > csv.field_size_limit():
        csv.field_size_limit(size)


def _csv_row(header: list[str], cells: list[str]) -> dict[str, Any]:
    return dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=False))


def _row_fields(
    row: Any, columns: LabelColumns, problems: _Problems, number: int
) -> dict[str, Any] | None:
    """The pair's fields of one row (its label as written; ``invalid`` when a field is
    wrong); None when there is no label to read or no object at all."""
    where = str(number)
    if not isinstance(row, dict):
        problems.add(where, f"expected an object, got {type(row).__name__}")
        return None
    found = len(problems.lines)
    claim = _text_field(row, columns.claim, problems, where)
    evidence = _evidence(_lookup(row, columns.evidence), columns.evidence, problems, where)
    label = _lookup(row, columns.label)
    if label is _MISSING:
        problems.add(where, f"field {columns.label}: missing (the label)")
        return None
    ident = _lookup(row, columns.id) if columns.id else _MISSING
    if ident is _MISSING or ident is None:
        ident = f"line {number}"
    elif not isinstance(ident, str | int) or isinstance(ident, bool):
        problems.add(where, f"field {columns.id}: must be a string or an integer")
    category = _optional_text(row, columns.category, problems, where)
    claim_id = _optional_text(row, columns.claim_id, problems, where)
    probability = _probability(row, problems, where)
    stratum = _optional_text(row, "origin.sampling.stratum", problems, where)
    size = _count(row, _SAMPLING_SIZE, "pairs", problems, where)
    strata = _count(row, _SAMPLING_STRATA, "strata", problems, where)
    invalid = len(problems.lines) > found
    return {"id": str(ident), "claim": claim, "evidence": evidence, "label": label,
            "category": category, "claim_id": claim_id, "probability": probability,
            "stratum": stratum, "stratum_size": size, "strata": strata,
            "invalid": invalid}  # fmt: skip


def _probability(row: Mapping[str, Any], problems: _Problems, where: str) -> float | None:
    """The design's chance of drawing the pair (``origin.sampling.probability``), if any."""
    value = _lookup(row, _SAMPLING_PROBABILITY)
    if value is _MISSING or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        problems.add(where, f"field {_SAMPLING_PROBABILITY}: must be a number in (0, 1]")
        return None
    return float(value)


_SAMPLING_PROBABILITY = "origin.sampling.probability"
_SAMPLING_SIZE = "origin.sampling.size"
_SAMPLING_STRATA = "origin.sampling.strata"


def _count(
    row: Mapping[str, Any], column: str, what: str, problems: _Problems, where: str
) -> int | None:
    """A whole number the design recorded (``origin.sampling.size``: the pairs its stratum
    holds; ``origin.sampling.strata``: the strata of its population), if recorded."""
    value = _lookup(row, column)
    if value is _MISSING or value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)  # a CSV cell
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.add(where, f"field {column}: must be a whole number of {what}, 1 or more")
        return None
    return value


class _Missing:
    pass


_MISSING: Any = _Missing()


def _lookup(row: Mapping[str, Any], column: str) -> Any:
    """``row[column]``, or a dotted path into nested objects (CSV headers may hold dots)."""
    if column in row:
        return row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _text_field(row: Mapping[str, Any], column: str, problems: _Problems, where: str) -> str:
    value = _lookup(row, column)
    if value is _MISSING:
        problems.add(where, f"field {column}: missing (the claim)")
    elif not isinstance(value, str) or not value.strip():
        problems.add(where, f"field {column}: must be non-empty text")
    else:
        return value
    return ""


def _optional_text(row: Mapping[str, Any], column: str, problems: _Problems, where: str) -> str:
    value = _lookup(row, column) if column else None
    if value is _MISSING or value is None:
        return ""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    problems.add(where, f"field {column}: must be text")
    return ""


def _evidence(value: Any, column: str, problems: _Problems, where: str) -> list[str]:
    if value is _MISSING:
        problems.add(where, f"field {column}: missing (the evidence)")
        return []
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and parsed and all(isinstance(p, str) for p in parsed):
            value = parsed  # a CSV cell holding a JSON array of passages
    passages = [value] if isinstance(value, str) else value
    if (
        not isinstance(passages, list)
        or not passages
        or not all(isinstance(p, str) for p in passages)
        or not any(p.strip() for p in passages)
    ):
        problems.add(where, f"field {column}: must be non-empty text or a list of passages")
        return []
    return passages


def _plain_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 30 else "SPELLING"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "…"
