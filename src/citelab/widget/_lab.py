"""``citelab.TemplateLab``: one question (or a few) under several contract templates, side by side.

For prompt engineers iterating on the citation contract::

    lab = TemplateLab(["default", "terse", my_template], "What does the Data Science MSc cost?")
    await lab.run()     # a DataFrame: one row per template × question, with the metrics
    lab                 # the columns: the system prompt (a diff against the first
                        # template's), the rendered answer and its sources, the metrics

Each template answers through the same agent (its prompt, model, corpus and retrieval; only
``contract_template`` changes) in a fresh conversation, so the columns differ only by the
template. ``model=`` and ``corpus=`` act as in :class:`~citelab.Chat` (a corpus alone gets
its own agent, named after it).

Metrics need no gold data; each support decision is the offline lexical judge's
(:class:`~citelab.evals.LexicalJudge`): ``statements``; ``cited`` (share of statements with
a citation); ``supported`` (share of citing statements that their cited sources together
support: citation recall without gold claims); ``precise`` (share of citations whose source
alone supports its statement); ``sources`` (cited sources kept), ``dropped`` (retrieved but
never cited), ``dangling`` (markers that pointed at no source). With several questions the
table has a row per question and :meth:`TemplateLab.summary` averages per template.

Everything shown is escaped or sanitized (answers through the contract's renderer; prompts,
titles and diffs escaped): model output and source titles are untrusted. The display is
static HTML (it is saved with the notebook); run :meth:`run` again after editing a template.
The offline extractive model quotes sources whatever the template says, so with it only the
numbering and the shape the sources are shown in can change the answer.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING

from citelab._errors import CitelabError, ConfigError, InvalidInput
from citelab.agent import AgentConfig, contract_template
from citelab.answers import Answer, AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.contract import render_answer_html
from citelab.corpus import Reader
from citelab.models import Model
from citelab.widget._display import MATH_IGNORE_CLASS
from citelab.widget._service import ServiceSource, resolve_agents

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LabResult", "TemplateLab"]


@dataclass
class LabResult:
    """One template's answer to one question, with its prompt and metrics."""

    template: str
    question: str
    prompt: str
    answer: Answer
    metrics: dict[str, float] = field(default_factory=dict)


class TemplateLab:
    """Several contract templates on the same question(s); see the module docs."""

    def __init__(
        self,
        templates: Sequence[str],
        questions: str | Sequence[str],
        service_or_agent_config: ServiceSource = None,
        agent: str = "default",
        *,
        model: str | Model | None = None,
        corpus: str | PathLike[str] | None = None,
        user: Reader | None = None,
    ) -> None:
        if len(templates) < 1:
            raise InvalidInput("TemplateLab: give at least one template (a name or inline text)")
        for position, template in enumerate(templates):
            try:
                contract_template(template)
            except ConfigError as exc:
                raise ConfigError(f"templates[{position}]: {exc}") from exc
        self.questions = [questions] if isinstance(questions, str) else list(questions)
        if not self.questions or not all(q.strip() for q in self.questions):
            raise InvalidInput("TemplateLab: give at least one non-empty question")
        resolved = resolve_agents(service_or_agent_config, agent, model=model, corpus=corpus)
        agents, self.agent, self._models = resolved.agents, resolved.agent, resolved.models
        if self.agent not in agents:
            known = ", ".join(sorted(agents))
            raise ConfigError(f"TemplateLab: agent {self.agent!r} not found (have: {known})")
        self.templates = list(templates)
        self._base: AgentConfig = agents[self.agent]
        self.user = user or Reader.anonymous()
        self.results: list[LabResult] = []

    def _agents(self) -> dict[str, AgentConfig]:
        return {
            f"lab-{i}": self._base.model_copy(update={"name": f"lab-{i}", "contract_template": t})
            for i, t in enumerate(self.templates)
        }

    async def run(self) -> pd.DataFrame:
        """Answer every question under every template; the table :meth:`to_frame` returns."""
        results: list[LabResult] = []
        async with AnswerService(
            self._agents(),
            store=MemoryConversationStore(),
            logs=MemoryLogStore(),
            models=self._models or None,
        ) as service:
            for question in self.questions:
                for index, template in enumerate(self.templates):
                    answer = await service.answer(f"lab-{index}", question, None, self.user)
                    results.append(_result(template, question, answer))
        self.results = results
        return self.to_frame()

    def to_frame(self) -> pd.DataFrame:
        """One row per template × question: the answer text and the metrics."""
        import pandas as pd

        rows = [
            {
                "template": _label(r.template),
                "question": r.question,
                "answer": r.answer.text,
                "prompt_chars": len(r.prompt),
                **r.metrics,
            }
            for r in self.results
        ]
        return pd.DataFrame(rows)

    def summary(self) -> pd.DataFrame:
        """The metrics averaged per template (in the order the templates were given)."""
        frame = self.to_frame()
        if frame.empty:
            return frame
        numeric = frame.drop(columns=["question", "answer"])
        order = list(dict.fromkeys(frame["template"]))
        return numeric.groupby("template", sort=False).mean().reindex(order)

    def note(self) -> str:
        """When every template gave the same answer to every question, the sentence saying
        so and why (empty otherwise, or before :meth:`run`)."""
        if len(self.templates) < 2 or not self.results:
            return ""
        by_question: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
        for r in self.results:
            cited = tuple(source.uri for source in r.answer.sources)
            by_question.setdefault(r.question, set()).add((r.answer.text, cited))
        if any(len(answers) > 1 for answers in by_question.values()):
            return ""
        deaf = not any(getattr(m, "reads_instructions", True) for m in self._deaf_probe())
        why = (
            "the model does not read the prompt's instructions (the offline extractive model "
            "reads only the numbered sources), so the templates cannot differ here"
            if deaf
            else "the templates did not change what the model wrote"
        )
        return (
            f"Every template gave the same answers: {why}. To compare templates, plug in a "
            'real model: TemplateLab(templates, questions, model="openai:<model>") with '
            "OPENAI_BASE_URL (and OPENAI_API_KEY) set, or model= any citelab Model."
        )

    def _deaf_probe(self) -> list[object]:
        given = (self._models or {}).get(self._base.model)
        if given is not None:
            return [given]
        from citelab.models import get_model

        try:
            return [get_model(self._base.model)]
        except CitelabError:  # cannot be built here: it reads, for all we know
            return []

    def _repr_html_(self) -> str:
        if not self.results:
            return "<p>TemplateLab: not run yet (<code>await lab.run()</code>).</p>"
        note = self.note()
        shown = (
            f'<p class="citelab-lab-note {MATH_IGNORE_CLASS}"><b>{html.escape(note)}</b></p>'
            if note
            else ""
        )
        return shown + lab_html(self.results, len(self.templates))


# --- one result ------------------------------------------------------------------------------


def _result(template: str, question: str, answer: Answer) -> LabResult:
    prompt = ""
    if answer.rounds and answer.rounds[0].messages:
        first = answer.rounds[0].messages[0]
        prompt = str(first.get("content") or "") if first["role"] == "system" else ""
    return LabResult(template, question, prompt, answer, citation_metrics(answer))


def citation_metrics(answer: Answer) -> dict[str, float]:
    """The lab's metrics for one answer (see the module docs)."""
    from citelab.evals import LexicalJudge
    from citelab.evals.scorers import split_statements

    judge = LexicalJudge()
    content = {s.number: s.content for s in answer.sources if s.number is not None}
    statements = split_statements(answer.text) if not answer.no_answer else []
    citing = [s for s in statements if s.citations]
    supported = [
        s
        for s in citing
        if judge.supports(s.claim, "\n".join(content.get(n, "") for n in s.citations))
    ]
    citations = [(s, n) for s in citing for n in dict.fromkeys(s.citations)]
    precise = [1 for s, n in citations if judge.supports(s.claim, content.get(n, ""))]
    return {
        "statements": float(len(statements)),
        "cited": _share(len(citing), len(statements)),
        "supported": _share(len(supported), len(citing)),
        "precise": _share(len(precise), len(citations)),
        "sources": float(len(answer.sources)),
        "dropped": float(len(answer.dropped)),
        "dangling": float(len(answer.dangling)),
    }


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _label(template: str) -> str:
    line = " ".join(template.split())
    return line if len(line) <= 40 else line[:39] + "…"


# --- the display -----------------------------------------------------------------------------

_STYLE = """<style>
.citelab-lab{display:grid;gap:12px;font:13px/1.45 system-ui,sans-serif}
.citelab-lab section{border:1px solid #8886;border-radius:6px;padding:8px;min-width:0}
.citelab-lab h4{margin:0 0 6px;font-size:13px}
.citelab-lab pre{white-space:pre-wrap;max-height:18em;overflow:auto;font-size:11px;margin:0}
.citelab-lab .add{background:#1a7f3733}.citelab-lab .del{background:#cf222e33}
.citelab-lab table{border-collapse:collapse}.citelab-lab td{padding:0 8px 0 0}
</style>"""


def lab_html(results: list[LabResult], columns: int) -> str:
    """The side-by-side view: per question, one column per template (never typeset as math:
    see :data:`~citelab.widget._display.MATH_IGNORE_CLASS`)."""
    parts = [_STYLE, f'<div class="citelab-lab-view {MATH_IGNORE_CLASS}">']
    for start in range(0, len(results), columns):
        row = results[start : start + columns]
        grid = f"grid-template-columns:repeat({columns},minmax(0,1fr))"
        parts.append(f"<h3>{html.escape(row[0].question)}</h3>")
        parts.append(f'<div class="citelab-lab" style="{grid}">')
        parts.extend(_column(result, row[0].prompt, first=i == 0) for i, result in enumerate(row))
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


def _column(result: LabResult, first_prompt: str, *, first: bool) -> str:
    sources = "".join(
        f"<li>[{s.number}] {html.escape(s.title)}</li>" for s in result.answer.sources
    )
    metrics = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v:.2f}</td></tr>" for k, v in result.metrics.items()
    )
    prompt = html.escape(result.prompt) if first else prompt_diff_html(first_prompt, result.prompt)
    what = "prompt" if first else "prompt (diff against the first)"
    return (
        f"<section><h4>{html.escape(_label(result.template))}</h4>"
        f"{render_answer_html(result.answer.message)}"
        f"<ol style='list-style:none;padding:0'>{sources}</ol>"
        f"<table>{metrics}</table>"
        f"<details><summary>{what}</summary><pre>{prompt}</pre></details></section>"
    )


def prompt_diff_html(first: str, other: str) -> str:
    """A line diff of ``other`` against ``first``, escaped, added/removed lines marked."""
    lines = difflib.unified_diff(first.splitlines(), other.splitlines(), lineterm="", n=2)
    out: list[str] = []
    for line in list(lines)[2:]:  # the ---/+++ header names no files
        escaped = html.escape(line)
        if line.startswith("+"):
            out.append(f'<span class="add">{escaped}</span>')
        elif line.startswith("-"):
            out.append(f'<span class="del">{escaped}</span>')
        else:
            out.append(escaped)
    return "\n".join(out) if out else "(the same prompt)"
