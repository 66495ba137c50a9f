"""The answer service: one call answers one turn of a conversation, with citations.

``await service.answer(agent, question, conversation_id=None, user=None, on_references=None,
on_token=None)`` does, in order (as the seed's ``AnswerService::answer()``):

1. validate the question: empty, whitespace-only or over-long is :class:`InvalidInput`;
2. load the conversation record; a follow-up is pinned to the record's agent, so the
   ``agent`` argument is ignored for follow-ups;
3. gates: an unknown agent is :class:`NotFound`; an agent disabled for answers, or one whose
   retrieval settings do not resolve, is :class:`Conflict`;
4. owner rules (:mod:`citelab.answers._owner`): unknown, expired or another user's
   conversation is :class:`NotFound`;
5. claim the conversation: a second turn of it while one runs is :class:`Conflict` at once
   (logged as refused), before anything is generated;
6. run the agent with a fresh runner id, within the answer deadline and with every model
   call's first piece within the first-token timeout (else :class:`ModelTimeout`): a
   conversation's first turn forces retrieval (the service runs rag_search with the question
   before the model); a follow-up lets the model decide, and reuses the held sources when it
   does not search. The history the model gets holds only the earlier turns whose sources
   this reader may read (an anonymous-owned conversation passes between readers);
7. substitute the agent's no-answer message iff nothing reached the client: on the
   non-streaming path (no ``on_token``) when no usable source is held, or on either path when
   the model wrote no text. ``on_token`` only ever gets the non-empty pieces the text is made
   of, so an empty text means no token was sent; a streamed answer that reached the client is
   left alone even without sources (finalizing then gives it no sources);
8. finalize citations, build anchors and the contract message. Under the agent's default
   ``numbering = "conversation"`` finalizing is at conversation scope: a source an earlier
   turn cited keeps its number (the model was shown it under that number, and the history's
   answers use it), newly cited ones continue the count, and the record remembers how many
   numbers are given out; ``numbering = "turn"`` numbers each turn's sources 1..k;
9. log the turn, capture its log and trace ids with one query for the runner's newest entry,
   and save the conversation. A failed turn is logged and saves nothing: the conversation
   stays as it was and usable; a turn whose save fails (another process won the race, or the
   database stayed locked) has its log entry marked ``not_saved:<code>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from citelab._async import run_blocking
from citelab._errors import (
    CitelabError,
    ConfigError,
    Conflict,
    InvalidInput,
    ModelTimeout,
    NotFound,
)
from citelab._paths import cache_dir
from citelab._tracing import span, tracer_from, tracing
from citelab.agent import (
    AgentConfig,
    AgentRun,
    ReferencesCallback,
    RunContext,
    TokenCallback,
    contract_template,
    default_agents,
    run_agent,
)
from citelab.answers._answer import Answer, DanglingMarker
from citelab.answers._feedback import FeedbackLogger
from citelab.answers._history import (
    ConversationSummary,
    History,
    HistoryTurn,
    first_question,
)
from citelab.answers._logs import LogEntry, LogStore, SQLiteLogStore, new_trace_id, runner_tag
from citelab.answers._owner import authorize
from citelab.answers._runtime import AgentRuntime, Runtimes
from citelab.answers._scoring import TraceScorer
from citelab.answers._store import (
    ConversationRecord,
    ConversationStore,
    SQLiteConversationStore,
    TurnRecord,
)
from citelab.contract import build_message
from citelab.corpus import Corpus, Document, Reader
from citelab.events import DoneEvent
from citelab.models import Message, Model, ModelDelta, ToolChoice, ToolSpec
from citelab.retrieval import SearchIndex
from citelab.sources import (
    MERGE_STRATEGIES,
    FinalizedAnswer,
    Source,
    build_anchors,
    finalize_citations,
    source_quotes,
)

__all__ = [
    "DEFAULT_ANSWER_DEADLINE_SECONDS",
    "DEFAULT_FIRST_TOKEN_SECONDS",
    "DEFAULT_TTL_SECONDS",
    "MAX_QUESTION_CHARS",
    "AnswerService",
    "default_database_path",
    "held_after",
]

MAX_QUESTION_CHARS = 20_000
"""Longest question accepted (the transports' ``Question`` has the same limit)."""
DEFAULT_TTL_SECONDS = 7 * 24 * 3600.0
"""A conversation expires this long after its last turn."""
DEFAULT_ANSWER_DEADLINE_SECONDS = 120.0
"""Longest one answer may take, every model call and search included (504 after it)."""
DEFAULT_FIRST_TOKEN_SECONDS = 30.0
"""Longest one model call may take to send its first piece (504 after it)."""


def default_database_path() -> Path:
    """The SQLite file conversations and logs go to when no store is given."""
    return cache_dir() / "answers.sqlite3"


@dataclass
class _Turn:
    """One turn in progress: the service's working state between the steps."""

    config: AgentConfig
    runtime: AgentRuntime
    record: ConversationRecord
    question: str
    reader: Reader
    runner_id: str
    streaming: bool
    trace_id: str | None = None
    """The turn's trace, when it is traced (else its log entry mints an id)."""
    history_drew_on: set[tuple[str, str]] = field(default_factory=set)
    """What the history given to the model drew on (an answer may repeat its history)."""


class AnswerService:
    """Answers questions with citations, keeping conversations, logs and feedback.

        ``agents`` defaults to the bundled ones (:func:`citelab.agent.default_agents`). ``store``
        and ``logs`` default to SQLite in ``database`` (default: :func:`default_database_path`).
        ``models`` overrides model names (an agent whose ``model`` is a key gets that instance);
        ``corpora`` gives loaded corpora by the name agents use. ``clock`` returns Unix time.
        ``index_dir`` is where search indexes go (default: next to each corpus file, or the cache
        folder when that is read-only); ``indexes`` gives indexes already built, by the name of
        the corpus they index (searched as they are; their corpora need not be in ``corpora``).
        A conversation expires ``ttl_seconds`` after its last
        turn. ``scorer`` scores traces on feedback (default: Langfuse when configured in the
        environment). ``tool_threads=False`` runs searches in the event loop instead of a worker
        thread (see :func:`~citelab.agent.run_agent`; evaluation runs use it). An answer must be
        done within ``answer_deadline_seconds`` and every model call must send its first piece
        within ``first_token_seconds`` (an agent's own ``answer_deadline_seconds`` and
        ``first_token_seconds`` win), else :class:`~citelab.ModelTimeout`. Each turn is traced
    (OpenTelemetry spans, the log entry naming the trace) with ``tracer_provider``, or when the
    standard ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` variables are set. Use ``async with``
        (or :meth:`aclose`) to close what the service opened; :meth:`prepare` loads what the
        agents need before the first question does.
    """

    def __init__(
        self,
        agents: Mapping[str, AgentConfig] | None = None,
        *,
        store: ConversationStore | None = None,
        logs: LogStore | None = None,
        models: Mapping[str, Model] | None = None,
        corpora: Mapping[str, Corpus] | None = None,
        clock: Callable[[], float] | None = None,
        database: str | Path | None = None,
        index_dir: str | Path | None = None,
        indexes: Mapping[str, SearchIndex] | None = None,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        max_question_chars: int = MAX_QUESTION_CHARS,
        scorer: TraceScorer | None = None,
        tool_threads: bool = True,
        answer_deadline_seconds: float = DEFAULT_ANSWER_DEADLINE_SECONDS,
        first_token_seconds: float = DEFAULT_FIRST_TOKEN_SECONDS,
        tracer_provider: Any | None = None,
    ) -> None:
        if answer_deadline_seconds <= 0 or first_token_seconds <= 0:
            raise InvalidInput("answer_deadline_seconds and first_token_seconds must be positive")
        self.agents: dict[str, AgentConfig] = dict(
            agents if agents is not None else default_agents()
        )
        path = Path(database) if database is not None else None
        self._owned: list[SQLiteConversationStore | SQLiteLogStore] = []
        if store is None:
            store = SQLiteConversationStore(path or default_database_path())
            self._owned.append(store)
        if logs is None:
            logs = SQLiteLogStore(path or default_database_path())
            self._owned.append(logs)
        self.store: ConversationStore = store
        self.logs: LogStore = logs
        self.clock = clock or time.time
        self.ttl_seconds = ttl_seconds
        self.max_question_chars = max_question_chars
        self.tool_threads = tool_threads
        self.answer_deadline_seconds = answer_deadline_seconds
        self.first_token_seconds = first_token_seconds
        self._claims: set[str] = set()
        self._tracer = tracer_from(tracer_provider)
        self._runtimes = Runtimes(
            models=models, corpora=corpora, index_dir=index_dir, indexes=indexes
        )
        self.feedback = FeedbackLogger(
            self.agents, self.store, self.logs, clock=self.clock, scorer=scorer
        )
        """Records users' ratings of answers (same owner rules as answering)."""

    # --- the public calls ----------------------------------------------------------------------

    async def answer(  # noqa: PLR0917 - the agreed interface takes these positionally
        self,
        agent: str,
        question: str,
        conversation_id: str | None = None,
        user: Reader | None = None,
        on_references: ReferencesCallback | None = None,
        on_token: TokenCallback | None = None,
        *,
        seed: int | None = None,
    ) -> Answer:
        """Answer one turn; see the module docstring for every rule.

        ``user`` is who asks (``None``: anonymous). ``on_references`` gets the provisional
        source list before text; ``on_token`` gets each piece of text (its presence makes
        this the streaming path). Follow-ups ignore ``agent``: they run the conversation's.
        """
        turn = await self._prepare(agent, question, conversation_id, user, on_token is not None)
        name = f"invoke_agent {turn.config.name}"
        with (
            await self._claim(turn),
            tracing(self._tracer),
            span(name, _turn_attributes(turn)) as traced,
        ):
            turn.trace_id = traced.trace_id
            try:
                run = await self._run(turn, on_references, on_token, seed)
            except Exception as exc:
                await self._log_failure(turn, exc)
                raise
            answer = await self._finish(turn, run)
            traced.update(_answer_attributes(answer))
            return answer

    async def _run(
        self,
        turn: _Turn,
        on_references: ReferencesCallback | None,
        on_token: TokenCallback | None,
        seed: int | None,
    ) -> AgentRun:
        """Run the agent within the answer deadline, each model call within the first-token
        timeout."""
        config = turn.config
        deadline = config.answer_deadline_seconds or self.answer_deadline_seconds
        first = config.first_token_seconds or self.first_token_seconds
        scope = asyncio.timeout(deadline)
        try:
            async with scope:
                return await run_agent(
                    self._context(turn),
                    FirstTokenTimeout(turn.runtime.model, first),
                    self._messages(turn),
                    max_rounds=config.max_rounds,
                    force_search=turn.question if not turn.record.turns else None,
                    on_token=on_token,
                    on_references=on_references,
                    seed=seed,
                    tool_threads=self.tool_threads,
                )
        except TimeoutError:
            if not scope.expired():
                raise
        raise ModelTimeout(
            f"agent {config.name!r}: the answer was not done within {deadline:g} s "
            "(its answer deadline)"
        )

    async def _claim(self, turn: _Turn) -> contextlib.AbstractContextManager[None]:
        """Claim the conversation for this turn before anything is generated: a second turn
        of it while one runs is :class:`Conflict` at once, logged as such (another process
        racing on the same file is still caught by the versioned save)."""
        key = turn.record.conversation_id
        if key in self._claims:
            refused = Conflict(
                f"conversation {key!r} is already answering a question; wait for that answer, "
                "then ask again"
            )
            await self._log_failure(turn, refused)
            raise refused
        self._claims.add(key)

        @contextlib.contextmanager
        def held() -> Iterator[None]:
            try:
                yield
            finally:
                self._claims.discard(key)

        return held()

    def answer_sync(
        self,
        agent: str,
        question: str,
        conversation_id: str | None = None,
        user: Reader | None = None,
        **callbacks: Any,
    ) -> Answer:
        """:meth:`answer` for scripts; inside a running event loop (Jupyter) it runs in a
        worker thread, so prefer ``await service.answer(...)`` there."""
        return run_blocking(self.answer(agent, question, conversation_id, user, **callbacks))

    async def conversation(
        self, conversation_id: str, user: Reader | None = None
    ) -> ConversationRecord:
        """The conversation record, under the same owner rules as answering."""
        record = await self.store.load(conversation_id)
        return authorize(record, conversation_id, user or Reader.anonymous(), self.clock())

    async def recent_conversations(
        self, user: Reader | None = None, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        """The conversations ``user`` owns (only ``agent``'s when given), the most recently
        active first, at most ``limit``; none for an anonymous reader, whose conversations
        belong to nobody (see :mod:`citelab.answers._history`)."""
        if limit < 1:
            raise InvalidInput(f"limit: must be at least 1, got {limit}")
        reader = user or Reader.anonymous()
        if reader.user_id is None:
            return []
        records = await self.store.owned_by(
            reader.user_id, now=self.clock(), agent=agent, limit=limit
        )
        return [_summary(record) for record in records if record.turns]

    async def history(self, conversation_id: str, user: Reader | None = None) -> History:
        """The turns of a conversation with the ``done`` event each ended with, under the
        owner rules of answering; a turn that drew on a document the reader may no longer
        read is withheld (see :mod:`citelab.answers._history`)."""
        record = await self.conversation(conversation_id, user)
        config = self._gate(record.agent)
        runtime = await self._runtimes.get(config)
        reader = user or Reader.anonymous()
        turns = [
            _history_turn(number, past, record, runtime.corpus, reader)
            for number, past in enumerate(record.turns, start=1)
        ]
        return History(
            conversation_id=record.conversation_id,
            agent=record.agent,
            created_at=record.created_at,
            updated_at=_updated_at(record),
            expires_at=record.expires_at,
            turns=turns,
        )

    async def document(
        self, agent: str, entity_type: str, entity_id: str, user: Reader | None = None
    ) -> Document:
        """The entity ``entity_type``/``entity_id`` of ``agent``'s corpus, as ``user`` (default:
        anonymous) may read it: under the same rules as answering (the agent must be able to
        answer), and :class:`~citelab.NotFound` alike for an unknown entity and one the user
        may not read (which so stays unseen)."""
        runtime = await self._runtimes.get(self._gate(agent))
        document = runtime.corpus.get(entity_type, entity_id)
        if document is None or not document.readable_by(user or Reader.anonymous()):
            raise NotFound(
                f"document 'entity:{entity_type}/{entity_id}' not found in agent {agent!r}'s corpus"
            )
        return document

    async def prepare(self, agents: Iterable[str] | None = None) -> None:
        """Load what ``agents`` (default: every one that can answer) need to answer: corpora,
        search indexes (built when missing), models; so the first questions do not wait for
        it. Raises as :meth:`answer` would for an unknown or disabled agent."""
        if agents is None:
            agents = [n for n, c in self.agents.items() if c.enabled and c.retrieval is not None]
        for name in agents:
            runtime = await self._runtimes.get(self._gate(name))
            prepare = getattr(runtime.model, "prepare", None)  # optional, as aclose is
            if prepare is not None:
                await prepare()

    def check_corpora(self, agents: Iterable[str] | None = None) -> None:
        """Load the corpus of ``agents`` (default: every one that can answer) now: a missing
        or malformed corpus is a :class:`~citelab.ConfigError` naming the file, the line and
        what is wrong, before a server listens (``citelab serve`` and ``citelab mcp`` call
        it), not an error on the first question. Search indexes are left to
        :meth:`prepare` or the first question."""
        if agents is None:
            agents = [n for n, c in self.agents.items() if c.enabled and c.retrieval is not None]
        for name in agents:
            try:
                self._runtimes.corpus(self._gate(name).corpus)
            except ConfigError as exc:
                raise ConfigError(f"agent {name!r}: {exc}") from exc

    def check_storage(self) -> None:
        """Open the SQLite file the service keeps its stores in, and try a write: a path that
        is a folder, not a database or not writable is a :class:`~citelab.ConfigError` now,
        not a 500 on the first question (``citelab serve`` calls it before listening)."""
        for owned in self._owned:
            owned.check()

    async def aclose(self) -> None:
        """Close what the service opened itself: the models it built, its SQLite stores (whose
        write-ahead log is checkpointed into the file, so the file alone is a full copy)."""
        await self._runtimes.aclose()
        for owned in self._owned:
            await asyncio.to_thread(owned.close)

    async def __aenter__(self) -> AnswerService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- steps -----------------------------------------------------------------------------------

    async def _prepare(
        self,
        agent: str,
        question: str,
        conversation_id: str | None,
        user: Reader | None,
        streaming: bool,
    ) -> _Turn:
        question = self._validated(question)
        reader = user or Reader.anonymous()
        now = self.clock()
        if conversation_id is None:
            config = self._gate(agent)
            record = self._new_record(config, reader, now)
        else:
            # Owner rules first, then the pinned agent: the ``agent`` a follow-up names plays no
            # part, so a bad name cannot tell whether a conversation id exists.
            stored = await self.store.load(conversation_id)
            record = authorize(stored, conversation_id, reader, now)
            config = self._gate(record.agent)
        runtime = await self._runtimes.get(config)
        return _Turn(config, runtime, record, question, reader, uuid.uuid4().hex, streaming)

    def _validated(self, question: str) -> str:
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput("question: must not be empty or whitespace only")
        if len(question) > self.max_question_chars:
            raise InvalidInput(
                f"question: {len(question)} characters is too long "
                f"(at most {self.max_question_chars})"
            )
        return question.strip()

    def _gate(self, name: str) -> AgentConfig:
        config = self.agents.get(name)
        if config is None:
            raise NotFound(f"agent {name!r} not found")
        if not config.enabled:
            raise Conflict(f"agent {name!r} is not enabled for answers")
        if config.retrieval is None:
            raise Conflict(f"agent {name!r} has no retrieval settings: it cannot answer")
        return config

    def _new_record(self, config: AgentConfig, reader: Reader, now: float) -> ConversationRecord:
        return ConversationRecord(
            conversation_id=uuid.uuid4().hex,
            agent=config.name,
            owner=reader.user_id,
            created_at=now,
            expires_at=now + self.ttl_seconds,
        )

    def _context(self, turn: _Turn) -> RunContext:
        config = turn.config
        assert config.retrieval is not None  # the gate refused agents without it
        return RunContext(
            agent_id=config.name,
            base_prompt=config.prompt,
            reader=turn.reader,
            settings=config.retrieval,
            template=contract_template(config.contract_template),
            tools=turn.runtime.tools,
            corpus=turn.runtime.corpus,
            hooks=config.hooks,
            merge=MERGE_STRATEGIES[config.merge_strategy],
            sources=_readable(turn.record.held_sources, turn),
            runner_id=turn.runner_id,
        )

    def _messages(self, turn: _Turn) -> list[Message]:
        """The history the model gets: only turns whose sources this reader may read (an
        anonymous-owned conversation passes between readers, and access can change)."""
        messages: list[Message] = []
        for past in turn.record.turns:
            if not _history_readable(past, turn):
                continue
            turn.history_drew_on.update(past.drew_on or ())
            messages.append({"role": "user", "content": past.question})
            messages.append({"role": "assistant", "content": past.answer})
        messages.append({"role": "user", "content": turn.question})
        return messages

    async def _finish(self, turn: _Turn, run: AgentRun) -> Answer:
        with span("finalize_citations") as traced:
            outcome = _outcome(turn, run)
            finalized = outcome.finalized
            anchors = build_anchors(finalized)
            message = build_message(
                outcome.text,
                list(finalized.sources),
                anchors,
                run.suggested_replies,
                source_quotes=source_quotes(anchors, finalized.sources),
            )
            traced.update(
                {
                    "citelab.sources.cited": len(finalized.sources),
                    "citelab.sources.dropped": len(finalized.dropped),
                    "citelab.markers.dangling": len(finalized.dangling),
                    "citelab.anchors": len(anchors),
                    "citelab.no_answer": outcome.no_answer,
                }
            )
        log_id, trace_id = await self._log_turn(turn, outcome)
        answer = Answer(
            text=outcome.text,
            sources=list(finalized.sources),
            anchors=anchors,
            suggested_replies=run.suggested_replies,
            message=message,
            agent=turn.config.name,
            conversation_id=turn.record.conversation_id,
            turn=outcome.number,
            runner_id=turn.runner_id,
            log_id=log_id,
            trace_id=trace_id,
            no_answer=outcome.no_answer,
            rounds=run.rounds,
            forced=run.forced,
            raw_text=run.text,
            dropped=list(finalized.dropped),
            dangling=[DanglingMarker.of(d) for d in finalized.dangling],
            mapping=dict(finalized.renumbering),
            keep=_keep(turn),
        )
        try:
            await self._save(turn, outcome, answer)
        except CitelabError as exc:  # lost the race (Conflict), or the file stayed locked
            await self._mark_unsaved(log_id, exc)
            raise
        return answer

    async def _save(self, turn: _Turn, outcome: _Outcome, answer: Answer) -> None:
        now = self.clock()
        past = TurnRecord(
            question=turn.question,
            answer=outcome.text,
            runner_id=turn.runner_id,
            log_id=answer.log_id,
            trace_id=answer.trace_id,
            done=answer.to_done_event().model_dump(mode="json"),
            no_answer=outcome.no_answer,
            cited={_number(source): source.uri for source in outcome.finalized.sources},
            created_at=now,
            drew_on=sorted(
                turn.history_drew_on
                | {
                    (source.entity_type, source.entity_id)
                    for source in outcome.run.sources
                    if source.entity_type is not None and source.entity_id is not None
                }
            ),
        )
        keep = _keep(turn)
        finalized = outcome.finalized
        numbered = max([keep, *map(_number, finalized.sources)])
        record = turn.record.model_copy(
            update={
                "turns": [*turn.record.turns, past],
                "held_sources": held_after(finalized, outcome.run.sources, keep=keep),
                "numbered": numbered if turn.config.numbering == "conversation" else 0,
                "expires_at": now + self.ttl_seconds,
            }
        )
        await self.store.save(record)

    # --- logs ------------------------------------------------------------------------------------

    async def _log_turn(self, turn: _Turn, outcome: _Outcome) -> tuple[str | None, str | None]:
        """Write the turn's entry, then capture its ids with one query for the runner's newest
        entry (the seed's way: whoever wrote the entry, the runner id finds it)."""
        finalized, run = outcome.finalized, outcome.run
        entry = self._entry(turn, run.system_prompt, outcome.text, finalized.sources)
        entry.extra["ai_answers"] = {
            "rounds": len(run.rounds),
            "forced_search": bool(run.forced),
            "dropped": [source.uri for source in finalized.dropped],
            "dangling": [d.raw for d in finalized.dangling],
        }
        entry.tags = _tags(turn, ["no_answer"] if outcome.no_answer else [])
        await self.logs.add(entry)
        newest = await self.logs.newest_for_runner(turn.runner_id)
        return (newest.log_id, newest.trace_id) if newest is not None else (None, None)

    async def _mark_unsaved(self, log_id: str | None, exc: CitelabError) -> None:
        """The turn's log entry says it was never saved (so it is not read as an answer)."""
        if log_id is None:
            return

        def unsaved(entry: LogEntry) -> LogEntry:
            entry.tags = [*entry.tags, "error", f"not_saved:{exc.code}"]
            entry.extra["error"] = {
                "code": exc.code,
                "type": type(exc).__name__,
                "message": str(exc),
            }
            return entry

        with contextlib.suppress(CitelabError):  # the log is busy too: the error still goes out
            await self.logs.annotate(log_id, unsaved)

    async def _log_failure(self, turn: _Turn, exc: Exception) -> None:
        entry = self._entry(turn, "", "", ())
        code = exc.code if isinstance(exc, CitelabError) else "internal_error"
        entry.extra["error"] = {"code": code, "type": type(exc).__name__, "message": str(exc)}
        entry.tags = _tags(turn, ["error"])
        await self.logs.add(entry)

    def _entry(
        self, turn: _Turn, system_prompt: str, output: str, sources: Sequence[Source]
    ) -> LogEntry:
        return LogEntry(
            runner_id=turn.runner_id,
            trace_id=turn.trace_id or new_trace_id(),
            agent=turn.config.name,
            conversation_id=turn.record.conversation_id,
            turn=len(turn.record.turns) + 1,
            prompt=f"{system_prompt}\n\nUser: {turn.question}".lstrip(),
            output=output,
            sources=[{"number": s.number, "uri": s.uri, "title": s.title} for s in sources],
            created_at=self.clock(),
        )


class FirstTokenTimeout:
    """``model``, except that a call sending nothing for ``seconds`` is :class:`ModelTimeout`
    (an SDK's own timeout and retries could make that minutes)."""

    def __init__(self, model: Model, seconds: float) -> None:
        self.model = model
        self.seconds = seconds
        self.name = model.name

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ModelDelta]:
        deltas = aiter(self.model.stream(messages, tools, tool_choice=tool_choice, seed=seed))
        try:
            try:
                first = await asyncio.wait_for(anext(deltas), self.seconds)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ModelTimeout(
                    f"model {self.name!r} sent nothing within {self.seconds:g} s "
                    "(the first-token timeout)"
                ) from None
            yield first
            async for delta in deltas:
                yield delta
        finally:
            close = getattr(deltas, "aclose", None)
            if close is not None:  # an abandoned stream frees what it holds
                await close()


@dataclass
class _Outcome:
    """What a run comes to once the no-answer rule is applied and citations are finalized."""

    run: AgentRun
    finalized: FinalizedAnswer
    text: str
    no_answer: bool
    number: int


def _turn_attributes(turn: _Turn) -> dict[str, Any]:
    """The turn span's GenAI attributes (no question or answer text: those stay in the log)."""
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": turn.config.name,
        "gen_ai.conversation.id": turn.record.conversation_id,
        "gen_ai.request.model": turn.config.model,
        "citelab.turn": len(turn.record.turns) + 1,
        "citelab.runner_id": turn.runner_id,
        "citelab.streaming": turn.streaming,
    }


def _answer_attributes(answer: Answer) -> dict[str, Any]:
    return {
        "citelab.log_id": answer.log_id,
        "citelab.rounds": len(answer.rounds),
        "citelab.no_answer": answer.no_answer,
    }


def _outcome(turn: _Turn, run: AgentRun) -> _Outcome:
    """Apply the no-answer rule (see the module docstring, step 7) and finalize."""
    no_answer = (not turn.streaming and not run.sources) or run.text == ""
    finalized = finalize_citations("" if no_answer else run.text, run.sources, keep=_keep(turn))
    text = turn.config.no_answer_message if no_answer else finalized.text
    return _Outcome(run, finalized, text, no_answer, len(turn.record.turns) + 1)


def _keep(turn: _Turn) -> int:
    """How many numbers finalizing keeps: the conversation's, under conversation numbering."""
    return turn.record.numbered if turn.config.numbering == "conversation" else 0


def held_after(
    finalized: FinalizedAnswer, held: Sequence[Source], *, keep: int = 0
) -> list[Source]:
    """The sources a conversation holds after a turn, as the next prompt shows them.

    First the numbered ones, by number: with ``keep`` (conversation scope) every held source
    numbered ``1..keep`` and every source this turn cited; at turn scope (``keep=0``) this
    turn's cited sources. Their numbers are the ones the answers' texts use, so the history
    and the next prompt agree. Then the uncited ones, numbered after them.
    """
    numbered = {s.number: s for s in held if s.number is not None and s.number <= keep}
    numbered.update((_number(s), s) for s in finalized.sources)
    kept = [numbered[number] for number in sorted(numbered)]
    cited = {source.key for source in kept}
    following = count(max(keep, max(numbered, default=0)) + 1)
    for source in held:
        if source.key not in cited:
            kept.append(source.model_copy(update={"number": next(following)}))
    return kept


def _number(source: Source) -> int:
    assert source.number is not None  # finalized sources are numbered
    return source.number


def _readable(held: Sequence[Source], turn: _Turn) -> list[Source]:
    """Held sources the reader may still read (access can change between turns)."""
    corpus = turn.runtime.corpus
    readable = []
    for source in held:
        if source.entity_type is None or source.entity_id is None:
            readable.append(source)
            continue
        document = corpus.get(source.entity_type, source.entity_id)
        if document is not None and document.readable_by(turn.reader):
            readable.append(source)
    return readable


def _history_readable(past: TurnRecord, turn: _Turn) -> bool:
    """Whether ``turn``'s reader may see ``past`` (every entity it drew on is readable)."""
    return _readable_turn(past, turn.record, turn.runtime.corpus, turn.reader)


def _readable_turn(
    past: TurnRecord, record: ConversationRecord, corpus: Corpus, reader: Reader
) -> bool:
    """Whether ``reader`` may see ``past``: every entity it drew on is readable to them (a
    turn saved before that was kept: only the owner of a user-owned conversation)."""
    if past.drew_on is None:
        return record.owner is not None and record.owner == reader.user_id
    for entity_type, entity_id in past.drew_on:
        document = corpus.get(entity_type, entity_id)
        if document is None or not document.readable_by(reader):
            return False
    return True


def _summary(record: ConversationRecord) -> ConversationSummary:
    return ConversationSummary(
        conversation_id=record.conversation_id,
        agent=record.agent,
        first_question=first_question(record.turns[0].question),
        turns=len(record.turns),
        created_at=record.created_at,
        updated_at=_updated_at(record),
        expires_at=record.expires_at,
    )


def _updated_at(record: ConversationRecord) -> float:
    return record.turns[-1].created_at if record.turns else record.created_at


def _history_turn(
    number: int, past: TurnRecord, record: ConversationRecord, corpus: Corpus, reader: Reader
) -> HistoryTurn:
    shown = HistoryTurn(
        turn=number, question=past.question, created_at=past.created_at, no_answer=past.no_answer
    )
    if not _readable_turn(past, record, corpus, reader):
        return shown.model_copy(update={"withheld": True})
    done = DoneEvent.model_validate(past.done) if past.done is not None else None
    return shown.model_copy(update={"answer": past.answer, "done": done})


def _tags(turn: _Turn, more: list[str]) -> list[str]:
    return ["ai_answers", runner_tag(turn.runner_id), f"agent:{turn.config.name}", *more]
