"""The offline default model: answers by quoting the sources it was shown, and cites them.

No network, no weights, deterministic. For each call it reads

* the question: the last user message;
* its view of numbered sources (see :mod:`citelab.models._seen`): ``<source>`` blocks and the
  other common numbered shapes (``[n] Title``, ``Source n:``, ``<document index="n">``,
  Markdown lists, JSON arrays; :mod:`citelab.models._formats`) in system, user and tool
  messages, and raw ``rag_search`` JSON numbered by position (as a naive model would: this is
  how numbers go stale when an agent does not rewrite tool messages); a user message's own
  sources are cut out of the question;

then either calls the search tool again or answers.

Coverage is the share of the question's content terms (stems, stopwords removed) found in
the title or text of any source in view; a term may be met by a related word (a short list:
``cost`` by ``fee``/``price``/``pay``…, ``deadline`` by ``close``/``due``, ``long`` by
``semesters``/``years``), and such a term, which names the kind of fact asked for, must be
met or coverage counts as none. A reformulated query adds the related words of uncovered
terms; when no sentence in view holds a term, its related words count in its place (with
their own IDF) when sentences are scored.

When coverage is below ``min_coverage``, a search tool is offered and the model has called
it fewer than ``max_searches`` times since the last user message, it calls the tool with a
reformulated query: the uncovered terms plus a few covered key terms.
``tool_choice="required"`` (or naming the search tool) forces the call; ``"none"`` forbids it.

Otherwise it answers: every sentence of every source is scored by the IDF-weighted question
terms it contains (terms in the source's title count half), and sentences are picked greedily
by the weight of terms they add, up to ``max_sentences``; ties go to the lower number, then
the earlier sentence. Each sentence ends with the number(s) it came from (``… text [2].``;
one sentence found in two sources reads ``[1][3]``). A sentence qualifies when it contains
two question terms, or one term carrying at least ``min_relevance`` of the question's weight;
with none, the answer is ``no_answer_text`` with no markers. A final
:class:`SuggestedRepliesDelta` carries up to three follow-ups built from the titles of the
sources it used or found relevant (after no answer: of the sources in view), each kept only
when a sentence of that source holds two of its title's terms, so that asking it gets an
answer; without such a source there are no suggestions rather than ones that lead nowhere.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field

from citelab._errors import InvalidInput
from citelab.contract import SuggestedReply
from citelab.models._formats import question_of
from citelab.models._lexicon import (
    Term,
    content_terms,
    related_stems,
    related_words,
    sentences,
    stems_of,
)
from citelab.models._markers import rewrite_markers
from citelab.models._pieces import tool_call_deltas, word_pieces
from citelab.models._seen import SeenSource, View, current_view
from citelab.models._types import (
    FinishDelta,
    Message,
    ModelDelta,
    SuggestedRepliesDelta,
    TextDelta,
    ToolChoice,
    ToolSpec,
    message_text,
)
from citelab.models._version import source_version

__all__ = ["NO_ANSWER_TEXT", "ExtractiveModel"]

NO_ANSWER_TEXT = "I could not find an answer to that in the sources I have."
"""What the model says when no source sentence is relevant (it carries no markers)."""

_TITLE_SHARE = 0.5
_ENOUGH_TERMS = 2
_REPLY_TITLE_LIMIT = 60


@dataclass
class _Sentence:
    """A candidate sentence, with every source number it appears under."""

    text: str
    stems: frozenset[str]
    title_stems: frozenset[str]
    numbers: list[int]
    order: tuple[int, int]


@dataclass(frozen=True)
class _Search:
    query: str


@dataclass(frozen=True)
class _Answer:
    text: str
    replies: list[SuggestedReply] = field(default_factory=list)


class ExtractiveModel:
    """Answers from the numbered sources in its messages; see the module docs for the rules.

    Options: ``search_tool`` (the tool it may call), ``max_searches`` (calls per question),
    ``min_coverage`` (below it, search), ``min_relevance`` (a one-term sentence's least share
    of the question), ``max_sentences`` (answer length), ``key_terms`` (covered terms kept in
    a reformulated query), ``no_answer_text``, ``piece_delay`` (seconds between streamed
    pieces, to watch a stream unfold; 0 still yields to the event loop), ``name``.
    """

    reads_instructions = False
    """It answers from the question and the numbered sources alone: no wording of the
    system prompt (the agent's prompt, the contract template) changes what it writes. Reports
    say so beside variants that only change that wording."""

    @property
    def code_version(self) -> str:
        """A digest of the code that decides its answers (see :mod:`citelab.models._version`):
        a cache of its answers keys by it, so a changed model never replays stale ones."""
        return source_version(__name__)

    def __init__(
        self,
        *,
        search_tool: str = "rag_search",
        max_searches: int = 1,
        min_coverage: float = 0.6,
        min_relevance: float = 0.25,
        max_sentences: int = 3,
        key_terms: int = 2,
        no_answer_text: str = NO_ANSWER_TEXT,
        piece_delay: float = 0.0,
        name: str = "extractive",
    ) -> None:
        if max_searches < 0 or max_sentences < 1 or key_terms < 0:
            raise InvalidInput(
                "ExtractiveModel: max_searches and key_terms must be >= 0, max_sentences >= 1"
            )
        if not (0.0 <= min_coverage <= 1.0 and 0.0 <= min_relevance <= 1.0):
            raise InvalidInput("ExtractiveModel: min_coverage and min_relevance must be in [0, 1]")
        self.name = name
        self.search_tool = search_tool
        self.max_searches = max_searches
        self.min_coverage = min_coverage
        self.min_relevance = min_relevance
        self.max_sentences = max_sentences
        self.key_terms = key_terms
        self.no_answer_text = no_answer_text
        self.piece_delay = piece_delay

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        """Stream a search call or an answer; ``seed`` is ignored (the model is deterministic)."""
        plan = self._plan(messages, tools, tool_choice)
        if isinstance(plan, _Search):
            arguments = json.dumps({"query": plan.query}, ensure_ascii=False)
            call_id = f"call_{_tool_calls_so_far(messages) + 1}"
            for delta in tool_call_deltas(0, call_id, self.search_tool, arguments):
                yield delta
            yield FinishDelta(reason="tool_calls")
            return
        for piece in word_pieces(plan.text):
            await asyncio.sleep(self.piece_delay)
            yield TextDelta(text=piece)
        if plan.replies:
            yield SuggestedRepliesDelta(replies=plan.replies)
        yield FinishDelta(reason="stop")

    def _plan(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> _Search | _Answer:
        """Decide what this call does, without streaming (pure: same input, same plan)."""
        terms = content_terms(_question(messages))
        view = current_view(messages)
        covered = _covered(terms, view)
        coverage = len(covered) / max(len(terms), 1)
        if any(related_stems(t.stem) and t.stem not in covered for t in terms):
            coverage = 0.0  # the kind of fact asked for (a cost, a deadline) is not in view
        if self._should_search(messages, tools, tool_choice, coverage):
            return _Search(self._reformulate(terms, covered))
        return self._answer(terms, view)

    # --- deciding to search ------------------------------------------------------------------

    def _should_search(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        coverage: float,
    ) -> bool:
        offered = any(tool["function"]["name"] == self.search_tool for tool in tools or ())
        if not offered or tool_choice == "none":
            return False
        if tool_choice == "required" or (
            isinstance(tool_choice, dict) and tool_choice["function"]["name"] == self.search_tool
        ):
            return True
        searches = _searches_since_question(messages, self.search_tool)
        return coverage < self.min_coverage and searches < self.max_searches

    def _reformulate(self, terms: list[Term], covered: set[str]) -> str:
        uncovered = [term for term in terms if term.stem not in covered]
        key = [term.word for term in terms if term.stem in covered][: self.key_terms]
        related = [word for term in uncovered for word in related_words(term.stem)]
        return " ".join([term.word for term in uncovered] + related + key)

    # --- answering ---------------------------------------------------------------------------

    def _answer(self, terms: list[Term], view: View) -> _Answer:
        candidates = _candidates(view)
        weights = _weights(_with_related(terms, candidates), candidates)
        chosen = self._choose(terms, weights, candidates)
        if not chosen:
            return _Answer(self.no_answer_text, _no_answer_replies(view, candidates))
        text = " ".join(_cite(sentence.text, sentence.numbers) for sentence in chosen)
        return _Answer(text, _replies(chosen, weights, candidates, view))

    def _choose(
        self, terms: list[Term], weights: dict[str, float], candidates: list[_Sentence]
    ) -> list[_Sentence]:
        total = sum(weights[term.stem] for term in terms)
        relevant = [c for c in candidates if self._relevant(c, weights, total)]
        chosen: list[_Sentence] = []
        covered: set[str] = set()
        while relevant and len(chosen) < self.max_sentences:
            best = max(relevant, key=lambda c: _rank(c, weights, covered))
            if not (best.stems & weights.keys()) - covered:
                break
            chosen.append(best)
            covered |= best.stems & weights.keys()
            relevant.remove(best)
        return chosen

    def _relevant(self, sentence: _Sentence, weights: dict[str, float], total: float) -> bool:
        own = len(sentence.stems & weights.keys())
        share = _score(sentence, weights) / total if total else 0.0
        return own >= _ENOUGH_TERMS or (own >= 1 and share >= self.min_relevance)


# --- pure helpers ----------------------------------------------------------------------------


def _question(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return question_of(message_text(message))
    raise InvalidInput("messages: there is no user message to answer")


def _after_question(messages: Sequence[Message]) -> Iterator[Message]:
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return iter(messages[last_user + 1 :])


def _searches_since_question(messages: Sequence[Message], tool: str) -> int:
    return sum(
        1
        for message in _after_question(messages)
        if message["role"] == "assistant"
        for call in message.get("tool_calls", [])
        if call["function"]["name"] == tool
    )


def _tool_calls_so_far(messages: Sequence[Message]) -> int:
    return sum(
        len(message.get("tool_calls", [])) for message in messages if message["role"] == "assistant"
    )


def _covered(terms: list[Term], view: View) -> set[str]:
    """The question stems a source in view holds (itself, or a related word: fee for cost)."""
    seen: set[str] = set()
    for source in view.values():
        seen |= stems_of(source.title) | stems_of(source.content)
    return {term.stem for term in terms if ({term.stem} | related_stems(term.stem)) & seen}


def _with_related(terms: list[Term], candidates: list[_Sentence]) -> list[Term]:
    """The question's terms, then the related words of each term no sentence holds
    (``cost`` adds ``fee``… only when no source says "cost")."""
    known = {term.stem for term in terms}
    present = set().union(*(c.stems for c in candidates)) if candidates else set()
    extra = [
        Term(related, related)
        for term in terms
        if term.stem not in present
        for related in sorted(related_stems(term.stem))
        if related not in known
    ]
    return terms + list({term.stem: term for term in extra}.values())


def _candidates(view: View) -> list[_Sentence]:
    by_text: dict[str, _Sentence] = {}
    for number in sorted(view):
        source = view[number]
        title_stems = frozenset(stems_of(source.title))
        for position, raw in enumerate(sentences(source.content)):
            text = rewrite_markers(raw, _drop).strip()  # the source's own [n] are not ours
            key = " ".join(text.casefold().split())
            if key in by_text:
                if number not in by_text[key].numbers:
                    by_text[key].numbers.append(number)
                continue
            stems = frozenset(stems_of(text))
            by_text[key] = _Sentence(text, stems, title_stems, [number], (number, position))
    return list(by_text.values())


def _drop(index: int, number: int) -> None:
    return None


def _weights(terms: list[Term], candidates: list[_Sentence]) -> dict[str, float]:
    """IDF of each question stem over the candidate sentences: rare words count more."""
    count = len(candidates)
    return {
        term.stem: 1.0 + math.log((count + 1) / (1 + sum(term.stem in c.stems for c in candidates)))
        for term in terms
    }


def _score(sentence: _Sentence, weights: dict[str, float]) -> float:
    own = sentence.stems & weights.keys()
    from_title = (sentence.title_stems & weights.keys()) - own
    return sum(weights[s] for s in own) + _TITLE_SHARE * sum(weights[s] for s in from_title)


def _rank(
    sentence: _Sentence, weights: dict[str, float], covered: set[str]
) -> tuple[float, float, int, int]:
    gain = sum(weights[s] for s in (sentence.stems & weights.keys()) - covered)
    return (gain, _score(sentence, weights), -sentence.order[0], -sentence.order[1])


def _cite(sentence: str, numbers: list[int]) -> str:
    markers = "".join(f"[{number}]" for number in numbers)
    if sentence[-1] in ".!?":
        return f"{sentence[:-1]} {markers}{sentence[-1]}"
    return f"{sentence} {markers}."


def _replies(
    chosen: list[_Sentence],
    weights: dict[str, float],
    candidates: list[_Sentence],
    view: View,
) -> list[SuggestedReply]:
    """Follow-ups about the first cited source and the next most relevant ones in view, each
    kept only when that source answers it (see :func:`_answerable`)."""
    cited = list(dict.fromkeys(n for sentence in chosen for n in sentence.numbers))
    best: dict[int, float] = {}
    for c in candidates:
        for number in c.numbers:
            best[number] = max(best.get(number, 0.0), _score(c, weights))
    others = sorted((n for n in best if n not in cited and best[n] > 0), key=lambda n: -best[n])
    titles = _answerable_titles([*cited[:1], *others], view, candidates)
    if not titles:
        return []
    first = f"Tell me more about {titles[0]}"
    return [
        SuggestedReply(label=label) for label in [first, *(f"What about {t}?" for t in titles[1:])]
    ]


def _no_answer_replies(view: View, candidates: list[_Sentence]) -> list[SuggestedReply]:
    """After no answer: questions about sources in view that they answer (none without any),
    so a chip never leads back to the same no-answer."""
    titles = _answerable_titles(sorted(view), view, candidates)
    return [SuggestedReply(label=f"Tell me about {title}") for title in titles]


def _answerable_titles(
    numbers: list[int], view: View, candidates: list[_Sentence], limit: int = 3
) -> list[str]:
    sentences_of: dict[int, list[frozenset[str]]] = {}
    for candidate in candidates:
        for number in candidate.numbers:
            sentences_of.setdefault(number, []).append(candidate.stems)
    titles: list[str] = []
    for number in numbers:
        title = _short(view[number].title)
        if title not in titles and _answerable(view[number], sentences_of.get(number, [])):
            titles.append(title)
        if len(titles) == limit:
            break
    return titles


def _answerable(source: SeenSource, sentence_stems: list[frozenset[str]]) -> bool:
    """Whether a question naming ``source``'s title would get an answer from it: some sentence
    holds two title terms (or the one term a one-word title has)."""
    terms = {term.stem for term in content_terms(source.title)}
    if not terms:
        return False
    enough = min(len(terms), _ENOUGH_TERMS)
    return any(len(stems & terms) >= enough for stems in sentence_stems)


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _REPLY_TITLE_LIMIT else title[: _REPLY_TITLE_LIMIT - 1] + "…"
