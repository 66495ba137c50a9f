"""The offline default model: answers by quoting the sources it was shown, and cites them.

No network, no weights, deterministic. For each call it reads

* the question: the last user message;
* its view of numbered sources (see :mod:`citelab.models._seen`): ``<source>`` blocks and the
  other common numbered shapes (``[n] Title``, ``Source n:``, ``<document index="n">``,
  Markdown lists, JSON arrays; :mod:`citelab.models._prompt_sources`) in system, user and tool
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

When coverage is below ``min_coverage``, or the sources in view give no answer (below), a
search tool is offered and the model has called it fewer than ``max_searches`` times since
the last user message, it calls the tool with a reformulated query: the uncovered terms plus a
few covered key terms. ``tool_choice="required"`` (or naming the search tool) forces the call;
``"none"`` forbids it.

Otherwise it answers: every sentence of every source is scored by the IDF-weighted question
terms it contains (terms in the source's title count half), and sentences are picked greedily
by the weight of terms they add, up to ``max_sentences``; ties go to the lower number, then
the earlier sentence. Each sentence ends with the number(s) it came from (``… text [2].``;
one sentence found in two sources reads ``[1][3]``). A sentence qualifies when it contains
two question terms, or one term carrying at least ``min_relevance`` of the question's weight.
The chosen sentences answer the question only when, with their sources' titles, they hold
question terms carrying at least ``min_answer_share`` of the question's weight (a term met by
a related word counts), one of them by the term itself: a ferry page's "Tickets cost 9 euros"
does not answer "How much is the semester fee?" (it holds a price, nothing about a semester
fee), nor does "Parking at the harbour costs 2 euros" answer "When is the harbour museum
open?" (it holds one term of three). Nor does a view that never names the thing asked about:
a word of the question that no source in view holds (title or text, nor a related word),
inside a run of content words whose word before it is held ("museum" in "the harbour museum
open", over a car park that is "open" by the "harbour"), means no answer, however many other
words the sentences share. With no sentence, or none that answers, the answer is
``no_answer_text`` with no markers.

Earlier answers in the messages count as said: a question that asks for more ("Tell me more
about X") is answered from sentences the conversation has not said yet (no answer when none
is left). A final :class:`SuggestedRepliesDelta` carries up to three follow-ups: "Tell me more
about" the first cited source, "What about" the next most relevant sources in view (after no
answer: "Tell me about" sources in view). Each is offered only when it leads somewhere new:
asked next, on the sources in view, it would get an answer quoting a sentence of the source it
names that the conversation has not said, and it is not a question already asked. Without
such a source there are no suggestions rather than ones that lead nowhere or back.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field

from citelab._errors import InvalidInput
from citelab._lexicon import (
    Term,
    content_runs,
    content_terms,
    is_question_wording,
    related_stems,
    related_words,
    sentences,
    stems_of,
)
from citelab.contract import SuggestedReply
from citelab.models._prompt_sources import question_of
from citelab.models._seen import View, current_view
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
from citelab.models.offline._markers import rewrite_markers
from citelab.models.offline._pieces import tool_call_deltas, word_pieces

__all__ = ["NO_ANSWER_TEXT", "ExtractiveModel"]

NO_ANSWER_TEXT = "I could not find an answer to that in the sources I have."
"""What the model says when no source sentence is relevant (it carries no markers)."""

_TITLE_SHARE = 0.5
_ENOUGH_TERMS = 2
_REPLY_TITLE_LIMIT = 60
_MAX_REPLIES = 3
_MORE = re.compile(r"\btell\s+me\s+more\b|\bmore\s+(?:about|on)\b")
_WORD = re.compile(r"\w+")


@dataclass
class _Sentence:
    """A candidate sentence, with every source number it appears under."""

    text: str
    stems: frozenset[str]
    title_stems: frozenset[str]
    numbers: list[int]
    order: tuple[int, int]


@dataclass(frozen=True)
class _Conversation:
    """What the conversation holds before this answer: the sentences earlier answers said
    (by :func:`_said_key`) and the questions asked."""

    said: frozenset[str]
    asked: frozenset[str]


@dataclass(frozen=True)
class _Search:
    query: str


@dataclass(frozen=True)
class _Answer:
    text: str
    replies: list[SuggestedReply] = field(default_factory=list)
    answered: bool = True


class ExtractiveModel:
    """Answers from the numbered sources in its messages; see the module docs for the rules.

    Options: ``search_tool`` (the tool it may call), ``max_searches`` (calls per question),
    ``min_coverage`` (below it, search), ``min_relevance`` (a one-term sentence's least share
    of the question), ``min_answer_share`` (the least share of the question's weight an
    answer must hold, else no answer), ``max_sentences`` (answer length), ``key_terms``
    (covered terms kept in a reformulated query), ``no_answer_text``, ``piece_delay``
    (seconds between streamed pieces, to watch a stream unfold; 0 still yields to the event
    loop), ``name``.
    """

    reads_instructions = False
    """It answers from the question and the numbered sources alone: no wording of the
    system prompt (the agent's prompt, the contract template) changes what it writes. Reports
    say so beside variants that only change that wording."""

    @property
    def code_version(self) -> str:
        """Its module and the installed citelab version (see :mod:`citelab.models._version`):
        a cache of its answers keys by it, so another release's answers are not replayed."""
        return source_version(__name__)

    def __init__(
        self,
        *,
        search_tool: str = "rag_search",
        max_searches: int = 1,
        min_coverage: float = 0.6,
        min_relevance: float = 0.25,
        min_answer_share: float = 0.5,
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
        if not all(0.0 <= v <= 1.0 for v in (min_coverage, min_relevance, min_answer_share)):
            raise InvalidInput(
                "ExtractiveModel: min_coverage, min_relevance and min_answer_share must be in "
                "[0, 1]"
            )
        self.name = name
        self.search_tool = search_tool
        self.max_searches = max_searches
        self.min_coverage = min_coverage
        self.min_relevance = min_relevance
        self.min_answer_share = min_answer_share
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
        question = _question(messages)
        terms = content_terms(question)
        view = current_view(messages)
        covered = _covered(terms, view)
        coverage = len(covered) / max(len(terms), 1)
        if any(related_stems(t.stem) and t.stem not in covered for t in terms):
            coverage = 0.0  # the kind of fact asked for (a cost, a deadline) is not in view
        answer = self._answer(question, view, _conversation(messages))
        if self._should_search(messages, tools, tool_choice, coverage, answer.answered):
            return _Search(self._reformulate(terms, covered))
        return answer

    # --- deciding to search ------------------------------------------------------------------

    def _should_search(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        coverage: float,
        answered: bool = True,
    ) -> bool:
        offered = any(tool["function"]["name"] == self.search_tool for tool in tools or ())
        if not offered or tool_choice == "none":
            return False
        if tool_choice == "required" or (
            isinstance(tool_choice, dict) and tool_choice["function"]["name"] == self.search_tool
        ):
            return True
        searches = _searches_since_question(messages, self.search_tool)
        return (coverage < self.min_coverage or not answered) and searches < self.max_searches

    def _reformulate(self, terms: list[Term], covered: set[str]) -> str:
        uncovered = [term for term in terms if term.stem not in covered]
        key = [term.word for term in terms if term.stem in covered][: self.key_terms]
        related = [word for term in uncovered for word in related_words(term.stem)]
        return " ".join([term.word for term in uncovered] + related + key)

    # --- answering ---------------------------------------------------------------------------

    def _answer(self, question: str, view: View, conversation: _Conversation) -> _Answer:
        candidates = _candidates(view)
        chosen, weights = self._pick(question, candidates, conversation.said)
        if not chosen:
            replies = self._no_answer_replies(view, candidates, conversation)
            return _Answer(self.no_answer_text, replies, answered=False)
        text = " ".join(_cite(sentence.text, sentence.numbers) for sentence in chosen)
        return _Answer(text, self._replies(chosen, weights, candidates, view, conversation))

    def _pick(
        self, question: str, candidates: list[_Sentence], said: frozenset[str]
    ) -> tuple[list[_Sentence], dict[str, float]]:
        """The sentences that answer ``question`` (none when they do not answer it), and the
        weights of its terms. Asked for more ("tell me more about…"), sentences the
        conversation has already said are left out."""
        terms = content_terms(question)
        absent = _absent_topic(question, candidates)
        if _asks_for_more(question):
            candidates = [c for c in candidates if _said_key(c.text) not in said]
        weights = _weights(_with_related(terms, candidates), candidates)
        chosen = self._choose(terms, weights, candidates)
        if chosen and not absent and self._answers(terms, chosen, weights):
            return chosen, weights
        return [], weights

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

    def _answers(
        self, terms: list[Term], chosen: list[_Sentence], weights: dict[str, float]
    ) -> bool:
        """Whether the chosen sentences answer the question (see the module docs): with their
        sources' titles they hold a question term itself (not only a related word: a price
        is no answer to "the semester fee" unless "semester" or "fee" is there) and the
        terms that carry ``min_answer_share`` of the question's weight."""
        held: set[str] = set()
        for sentence in chosen:
            held |= sentence.stems | sentence.title_stems
        if not any(term.stem in held for term in terms):
            return False
        total = sum(weights[term.stem] for term in terms)
        met = sum(weights[term.stem] for term in terms if _met(term, held))
        return total == 0 or met / total >= self.min_answer_share

    # --- suggested replies -------------------------------------------------------------------

    def _replies(
        self,
        chosen: list[_Sentence],
        weights: dict[str, float],
        candidates: list[_Sentence],
        view: View,
        conversation: _Conversation,
    ) -> list[SuggestedReply]:
        """ "Tell me more about" the first cited source, then "What about" the next most
        relevant ones in view: each only when it leads somewhere new (see :meth:`_leads_on`)."""
        cited = list(dict.fromkeys(n for sentence in chosen for n in sentence.numbers))
        best: dict[int, float] = {}
        for c in candidates:
            for number in c.numbers:
                best[number] = max(best.get(number, 0.0), _score(c, weights))
        others = sorted((n for n in best if n not in cited and best[n] > 0), key=lambda n: -best[n])
        said = conversation.said | {_said_key(sentence.text) for sentence in chosen}
        labels: list[str] = []
        for number in [*cited[:1], *others]:
            title = _short(view[number].title)
            label = f"Tell me more about {title}" if number in cited else f"What about {title}?"
            if self._leads_on(
                label, number, candidates, said=said, asked=conversation.asked, offered=labels
            ):
                labels.append(label)
            if len(labels) == _MAX_REPLIES:
                break
        return [SuggestedReply(label=label) for label in labels]

    def _no_answer_replies(
        self, view: View, candidates: list[_Sentence], conversation: _Conversation
    ) -> list[SuggestedReply]:
        """After no answer: questions about sources in view that they answer (none without
        any), so a chip never leads back to the same no-answer."""
        labels: list[str] = []
        for number in sorted(view):
            label = f"Tell me about {_short(view[number].title)}"
            if self._leads_on(
                label,
                number,
                candidates,
                said=conversation.said,
                asked=conversation.asked,
                offered=labels,
            ):
                labels.append(label)
            if len(labels) == _MAX_REPLIES:
                break
        return [SuggestedReply(label=label) for label in labels]

    def _leads_on(
        self,
        label: str,
        number: int,
        candidates: list[_Sentence],
        *,
        said: frozenset[str],
        asked: frozenset[str],
        offered: list[str],
    ) -> bool:
        """Whether asking ``label`` next would get an answer with a sentence of source
        ``number`` that the conversation has not said yet, on the sources in view; a label
        already offered or already asked leads nowhere new."""
        key = _said_key(label)
        if key in asked or any(_said_key(other) == key for other in offered):
            return False
        chosen, _ = self._pick(label, candidates, said)
        return any(
            number in sentence.numbers and _said_key(sentence.text) not in said
            for sentence in chosen
        )

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


def _absent_topic(question: str, candidates: list[_Sentence]) -> list[str]:
    """The question's named things that no source in view holds: a word that no sentence
    or title in view holds (nor a word related to it), inside a run of content words whose
    word before it is held ("museum" in "When is the harbour museum open?" over a ferry page
    and a car park's: the harbour is there, its museum is not). With one, the sentences in
    view are about something else, however many of the other words they share."""
    present: set[str] = set()
    for sentence in candidates:
        present |= sentence.stems | sentence.title_stems
    absent = []
    for run in content_runs(question):
        for before, term, after in zip(run, run[1:], run[2:], strict=False):
            del after  # a word follows: the run goes on past the missing one
            if is_question_wording(before.stem) or is_question_wording(term.stem):
                continue
            if _met(before, present) and not _met(term, present):
                absent.append(term.word)
    return absent


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
        title = _said_key(source.title)
        for position, raw in enumerate(sentences(source.content)):
            text = rewrite_markers(raw, _drop).strip()  # the source's own [n] are not ours
            if _said_key(text) == title:
                continue  # a heading that repeats the title says nothing of its own
            key = " ".join(text.casefold().split())
            if key in by_text:
                if number not in by_text[key].numbers:
                    by_text[key].numbers.append(number)
                continue
            stems = frozenset(stems_of(text))
            by_text[key] = _Sentence(text, stems, title_stems, [number], (number, position))
    return list(by_text.values())


def _met(term: Term, stems: set[str]) -> bool:
    """Whether ``stems`` hold ``term`` itself or a word related to it (fee for cost)."""
    return term.stem in stems or not related_stems(term.stem).isdisjoint(stems)


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
    # fsum: exactly rounded whatever the sets' order, which changes with the hash seed (a plain
    # sum differed in its last bits between processes, and so did ties between sentences).
    return math.fsum(weights[s] for s in own) + _TITLE_SHARE * math.fsum(
        weights[s] for s in from_title
    )


def _rank(
    sentence: _Sentence, weights: dict[str, float], covered: set[str]
) -> tuple[float, float, int, int]:
    gain = math.fsum(weights[s] for s in (sentence.stems & weights.keys()) - covered)
    return (gain, _score(sentence, weights), -sentence.order[0], -sentence.order[1])


def _cite(sentence: str, numbers: list[int]) -> str:
    markers = "".join(f"[{number}]" for number in numbers)
    if sentence[-1] in ".!?":
        return f"{sentence[:-1]} {markers}{sentence[-1]}"
    return f"{sentence} {markers}."


def _asks_for_more(question: str) -> bool:
    """Whether the question asks for more than was said ("Tell me more about X")."""
    return _MORE.search(question.casefold()) is not None


def _said_key(text: str) -> str:
    """A sentence's words, without its markers, case or punctuation: how a sentence is
    recognised in an earlier answer."""
    return " ".join(_WORD.findall(rewrite_markers(text, _drop).casefold()))


def _conversation(messages: Sequence[Message]) -> _Conversation:
    """The sentences earlier answers said and the questions asked so far (this one too)."""
    said: set[str] = set()
    asked: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            said.update(_said_key(piece) for piece in sentences(message_text(message)))
        elif message["role"] == "user":
            asked.add(_said_key(question_of(message_text(message))))
    return _Conversation(frozenset(said), frozenset(asked))


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _REPLY_TITLE_LIMIT else title[: _REPLY_TITLE_LIMIT - 1] + "…"
