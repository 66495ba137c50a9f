"""``citelab.Labeller``: people label (claim, passage) pairs in the notebook, one key a pair.

The widget shows one pair at a time — the claim, each cited passage with the sentence(s) the
claim rests on marked — and takes **supported** (1 or Y), **partly** (2 or P), **not
supported** (3 or N) or **skip** (S), and undo (U or Backspace), from the keyboard or its
buttons. The kernel saves each label before it shows the next pair: one line appended to a
JSON Lines file and synced to disk (:class:`~citelab.evals.LabelFile`), so a kernel restart
loses nothing, and a new Labeller on the same file resumes after the last label saved.

What to label comes from a run (:func:`~citelab.evals.label_pairs`: a run folder, an
``EvalResult``, records) or from pairs given as :class:`~citelab.evals.labels.LabelItem` s, in an
order fixed by the seed, pairs two judges disagree on first when ``disagree`` names them
(:func:`~citelab.evals.label_queue`). ``sample`` is how many decisions are wanted (a skip is
no decision, so a skipped pair's place goes to the next one).

The judges' verdicts are shown **after** a pair is labelled by default (in the line that
confirms the label), so they cannot anchor the person's decision; ``show_verdicts="before"``
shows them with the pair, ``"never"`` not at all. Each label's ``origin`` keeps the verdicts
(and the scores of the judges that give one) and whether they were visible before the decision.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeGuard, cast

import traitlets
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citelab._errors import CitelabError, InvalidInput
from citelab.contract import sanitize_html
from citelab.evals.labels import (
    LABELS,
    Design,
    JudgeSpec,
    Label,
    LabelFile,
    LabelItem,
    LabelledPair,
    LabelLine,
    LabelPairs,
    LabelPassage,
    LabelQueue,
    PairSource,
    PairUnit,
    label_pairs,
    label_queue,
    pair_estimate,
    pending,
)
from citelab.widget._chat import kernel_session
from citelab.widget._display import StaticFallbackWidget
from citelab.widget._static import bundle

__all__ = ["SHOW_VERDICTS", "Labeller", "ShowVerdicts"]

ShowVerdicts = Literal["after", "before", "never"]
SHOW_VERDICTS: tuple[ShowVerdicts, ...] = ("after", "before", "never")

LabelSource = PairSource | LabelPairs | Sequence[LabelItem]
"""What a labeller reads its pairs from."""

_LABEL_NAMES = {
    "supported": "supported",
    "partially_supported": "partly supported",
    "not_supported": "not supported",
    "skip": "skipped",
}


class _LabelRequest(BaseModel):
    """The front end's label: which pair (the one it shows) and the decision."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["label"]
    request_id: str | None = Field(default=None, max_length=200)
    id: str = Field(min_length=1)
    label: Label


class _UndoRequest(BaseModel):
    """The front end's undo: take the last label back."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["undo"]
    request_id: str | None = Field(default=None, max_length=200)


class Labeller(StaticFallbackWidget):
    """Label pairs in the notebook (see the module docs).

    ``source``: a run folder, an ``EvalResult``, ``CaseRecord`` s, a
    :class:`~citelab.evals.labels.LabelPairs` or :class:`~citelab.evals.labels.LabelItem` s.
    ``path``:
    the labels file (created on the first label; resumed when it exists). ``sample``:
    decisions wanted (None: every pair). ``disagree``: two judges or more (names,
    configurations or judge objects) whose disagreements come first; ``judges``: more judges
    whose verdicts are shown and kept. ``unit``: a pair per ``citation`` or per cited
    ``statement``. ``run`` names the run in the pairs' ids.
    """

    _esm = bundle("widget_label.js")
    _css = bundle("citelab.css")

    item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The pair to label (``js/contract/model.js`` ``LabelPair``); None once done."""
    progress = traitlets.Dict().tag(sync=True)
    """Decisions made and wanted, skips, counts per label, the judges."""
    last = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The last label saved in this file for one of these pairs (what Undo takes back)."""
    notices = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """What the person should know: a repaired file, pairs left out, labels taken elsewhere."""
    file_name = traitlets.Unicode("").tag(sync=True)
    """The labels file, as given."""
    show_verdicts = traitlets.Unicode("after").tag(sync=True)
    """When the judges' verdicts show: ``after`` the label, ``before`` it, or ``never``."""
    _kernel_session = traitlets.Unicode("").tag(sync=True)
    """The session id of the kernel process holding this labeller (see ``Chat``)."""

    def __init__(
        self,
        source: LabelSource,
        path: str | os.PathLike[str],
        *,
        sample: int | None = 100,
        seed: int = 0,
        disagree: Sequence[JudgeSpec] | None = None,
        judges: Sequence[JudgeSpec] = (),
        unit: PairUnit = "citation",
        run: str | None = None,
        show_verdicts: ShowVerdicts = "after",
        design: Design | None = None,
        **kwargs: Any,
    ) -> None:
        if show_verdicts not in SHOW_VERDICTS:
            raise InvalidInput(
                f"show_verdicts must be one of {', '.join(SHOW_VERDICTS)}, got {show_verdicts!r}"
            )
        items, notes = _pairs(source, unit, run)
        self.queue: LabelQueue = label_queue(
            items, sample=sample, seed=seed, disagree=disagree, judges=judges, design=design
        )
        """The pairs in labelling order, with the judges' verdicts."""
        self.file = LabelFile(path)
        """The labels file."""
        super().__init__(
            file_name=str(path),
            show_verdicts=show_verdicts,
            notices=[*self.file.notices, *notes],
            _kernel_session=kernel_session(),
            **kwargs,
        )
        self._ids = {item.id for item in self.queue.items}
        self._current: LabelItem | None = None
        self.on_msg(_route_message)
        self._show()

    # --- what users call -----------------------------------------------------------------------

    @property
    def current(self) -> LabelItem | None:
        """The pair shown (None once the sample is labelled)."""
        return self._current

    def label(self, label: Label, pair_id: str | None = None) -> LabelLine:
        """Label the pair shown (as its buttons do) and show the next; with ``pair_id``, only
        when that is the pair shown."""
        if label not in LABELS:
            raise InvalidInput(f"label must be one of {', '.join(LABELS)}, got {label!r}")
        item = self._current
        if item is None:
            raise InvalidInput(f"nothing left to label: the sample is done ({self.file.path})")
        if pair_id is not None and pair_id != item.id:
            raise InvalidInput(
                f"pair {pair_id!r} is not the one shown ({item.id!r}): it was labelled already"
            )
        line = item.line(label, **self._origin(item))
        if not self.file.append(line):
            self._notice(f"{item.id} was labelled in another session meanwhile: its label is kept")
            held = self.file.get(item.id)
            line = held if held is not None else line
        self._show()
        return line

    def undo(self) -> LabelLine:
        """Take the file's last label back (when it is one of these pairs) and show that pair
        again."""
        self.file.refresh()
        labels = self.file.labels
        if not labels:
            raise InvalidInput(f"nothing to undo: {self.file.path} holds no label")
        if labels[-1].id not in self._ids:
            raise InvalidInput(
                f"the last label in {self.file.path} is for a pair this labeller does not show "
                f"({labels[-1].id!r}): undo it where it was made"
            )
        line = self.file.undo(labels[-1].id)
        self._show()
        return line

    def labels(self) -> list[LabelLine]:
        """The labels of these pairs in the file, in file order."""
        return [line for line in self.file.labels if line.id in self._ids]

    def pairs(self, partial_as: Literal["no", "yes", "skip"] = "no") -> list[LabelledPair]:
        """These pairs' decisions as "fully supported?" pairs (``calibrate`` takes them):
        see :meth:`~citelab.evals.LabelFile.pairs`."""
        return [pair for pair in self.file.pairs(partial_as) if pair.id in self._ids]

    @property
    def remaining(self) -> int:
        """Decisions still wanted."""
        return int(self.progress.get("wanted", 0)) - int(self.progress.get("decided", 0))

    # --- the front end -------------------------------------------------------------------------

    def handle_message(self, content: object) -> None:
        """Act on a front-end message (``label`` or ``undo``) and answer it with an ``ack``."""
        request_id = _request_id(content)
        try:
            request = _parse(content)
            if isinstance(request, _LabelRequest):
                self.label(request.label, request.id)
            else:
                self.undo()
        except CitelabError as exc:
            self._ack(request_id, str(exc))
            return
        self._ack(request_id, None)

    def _ack(self, request_id: str | None, error: str | None) -> None:
        message: dict[str, Any] = {"type": "ack", "request_id": request_id}
        if error is not None:
            message["error"] = error
        self.send(message)

    # --- state ---------------------------------------------------------------------------------

    def _origin(self, item: LabelItem) -> dict[str, Any]:
        said = self.queue.verdicts.get(item.id, {})
        origin: dict[str, Any] = {
            "verdicts": dict(said),
            "verdicts_shown_before": self.show_verdicts == "before" and bool(said),
            "seed": self.queue.seed,
            "labelled_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        scores = self.queue.scores.get(item.id)
        if scores:
            origin["scores"] = dict(scores)
        if self.queue.disagree:
            origin["disagree"] = list(self.queue.disagree)
        origin["sampling"] = self.queue.sampling(item.id)
        return origin

    def estimate(self) -> dict[str, Any] | None:
        """The share of these pairs people call supported, from the labels so far (weighted
        by the design's chances; with the first judge's scores, else verdicts, PPI++): its
        value, interval, width, and how many more labels would reach ±0.05. None before
        the first decision."""
        pairs = self.pairs()
        if not pairs:
            return None
        return pair_estimate(self.queue, pairs)

    def _show(self) -> None:
        """Set the traits from the file and the queue: the next pair, progress, the last label."""
        left = pending(self.queue, self.file)
        self._current = left[0] if left else None
        with self.hold_sync():
            # set_trait: traitlets' stubs type a Dict trait as never None, these two may be.
            self.set_trait("last", self._last())
            self.progress = self._progress()
            self.set_trait("item", None if self._current is None else self._payload(self._current))
        self.refresh_static()

    def _progress(self) -> dict[str, Any]:
        counts = dict.fromkeys(LABELS, 0)
        for line in self.labels():
            counts[line.label] += 1
        decided = sum(counts.values()) - counts["skip"]
        return {
            "decided": decided,
            "wanted": self.queue.wanted,
            "skipped": counts["skip"],
            "counts": counts,
            "pairs": len(self.queue.items),
            "judges": list(self.queue.judges),
            "disagree": list(self.queue.disagree),
            "disagreements": self.queue.disagreements,
            "design": self.queue.design,
            "estimate": self.estimate(),
        }

    def _last(self) -> dict[str, Any] | None:
        labels = self.file.labels
        if not labels or labels[-1].id not in self._ids:
            return None
        line = labels[-1]
        shown = self.show_verdicts != "never"
        return {
            "id": line.id,
            "label": line.label,
            "claim": line.claim,
            "verdicts": self._verdicts(line.id) if shown else [],
        }

    def _verdicts(self, pair_id: str) -> list[dict[str, Any]]:
        said = self.queue.verdicts.get(pair_id, {})
        return [{"judge": name, "verdict": verdict} for name, verdict in said.items()]

    def _payload(self, item: LabelItem) -> dict[str, Any]:
        """The pair as the front end shows it (every text is untrusted: shown as text)."""
        return {
            "id": item.id,
            "claim": item.claim,
            "passages": [_passage(item.claim, passage) for passage in item.passages],
            "context": _context(item.origin),
            "verdicts": self._verdicts(item.id) if self.show_verdicts == "before" else [],
        }

    def _notice(self, text: str) -> None:
        self.notices = [*self.notices, text]

    def static_html(self) -> str:
        progress = self.progress
        head = (
            f"<p><strong>Labelling</strong>: {progress.get('decided', 0)} of "
            f"{progress.get('wanted', 0)} decided ({progress.get('skipped', 0)} skipped), "
            f"saved to <code>{html.escape(self.file_name)}</code></p>"
        )
        item = self._current
        if item is None:
            return sanitize_html(head + "<p>Nothing left to label.</p>")
        passages = "".join(f"<p>{html.escape(passage.text)}</p>" for passage in item.passages)
        claim = f"<p><strong>Claim</strong>: {html.escape(item.claim)}</p>"
        return sanitize_html(head + claim + passages)


def _route_message(widget: Labeller, content: object, buffers: object) -> None:
    widget.handle_message(content)


def _pairs(
    source: LabelSource, unit: PairUnit, run: str | None
) -> tuple[list[LabelItem], list[str]]:
    """The pairs of ``source``, and notes on what was left out."""
    if isinstance(source, LabelPairs):
        found = source
    elif _are_items(source):
        return list(source), []
    else:
        found = label_pairs(cast(PairSource, source), unit=unit, run=run)
    if not found.items:
        raise InvalidInput(f"run {found.run!r} has no cited statements to label")
    notes = [
        f"{count} {reason} left out (nothing to show)" for reason, count in found.left_out.items()
    ]
    return found.items, notes


def _are_items(source: object) -> TypeGuard[Sequence[LabelItem]]:
    return (
        isinstance(source, Sequence)
        and not isinstance(source, str)
        and bool(source)
        and all(isinstance(item, LabelItem) for item in source)
    )


def _passage(claim: str, passage: LabelPassage) -> dict[str, Any]:
    span = passage.cited_span(claim)
    spans = (
        []
        if span is None
        else [{"text": passage.text[span[0] : span[1]], "start": span[0], "end": span[1]}]
    )
    return {
        "number": passage.number,
        "title": passage.title,
        "uri": passage.uri,
        "text": passage.text,
        "cited_spans": spans,
    }


_CONTEXT_KEYS = ("question", "case", "turn", "statement", "variant", "model", "dataset", "run")


def _context(origin: Mapping[str, Any]) -> list[list[str]]:
    """Where the pair comes from, as ``[name, value]`` lines to show."""
    lines = []
    for key in _CONTEXT_KEYS:
        value = origin.get(key)
        if value is None or value == "":
            continue
        lines.append([key, str(value)])
    return lines


def _request_id(content: object) -> str | None:
    if isinstance(content, Mapping):
        value = content.get("request_id")
        if isinstance(value, str) and len(value) <= 200:
            return value
    return None


def _parse(content: object) -> _LabelRequest | _UndoRequest:
    kind = content.get("type") if isinstance(content, Mapping) else None
    model: type[_LabelRequest] | type[_UndoRequest] = (
        _UndoRequest if kind == "undo" else _LabelRequest
    )
    try:
        return model.model_validate(content)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'message'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise InvalidInput(f"bad front-end message: {problems}") from exc
