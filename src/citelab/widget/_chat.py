"""``citelab.Chat``: the notebook chat widget, kernel side.

A question (the front end's ``ask`` message, or :meth:`Chat.ask`) runs the answer service as
an asyncio task on the kernel's running loop, so the kernel stays free while it streams.
Questions run one after another, in the order asked. Each turn sends ``turn_start``, then
``references`` / coalesced ``token`` messages, then ``done`` or ``error`` to the front end and
to every :class:`~citelab.widget.SourcesPanel` of the chat; the ``turns`` trait holds the
conversation's settled state, so a reload or a second view shows it.

A new question (``followup=False``) starts a new conversation and the view clears; a
follow-up continues the current conversation (a new one when there is none yet). The view's
Stop button cancels what runs (:meth:`Chat.cancel`); New conversation cancels and forgets the
conversation (:meth:`Chat.new_conversation`). ``pace="demo"`` replays each answer at reading
speed, for demos on the offline model (which answers at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

import traitlets

from citelab._errors import CitelabError, Conflict, InvalidInput, NotFound
from citelab.answers import Answer, AnswerService, FeedbackValue, LogEntry, read_document
from citelab.contract import AnswerMessage
from citelab.corpus import Reader
from citelab.events import Reference
from citelab.models import Model
from citelab.widget._batching import (
    DEFAULT_INTERVAL,
    DEFAULT_MAX_TOKENS,
    TokenBatcher,
    check_batching,
)
from citelab.widget._display import StaticFallbackWidget
from citelab.widget._pace import Pace, Pacer, pace_seconds
from citelab.widget._protocol import (
    AskRequest,
    DocumentRequest,
    FeedbackRequest,
    NewConversationRequest,
    StopRequest,
    ack_message,
    done_message,
    error_message,
    parse_chat_request,
    references_message,
    request_id_of,
    reset_message,
    token_message,
    turn_start_message,
)
from citelab.widget._service import ServiceSource, check_agent, reader_of, resolve_service
from citelab.widget._static import bundle
from citelab.widget._turns import RECORD_COLUMNS, ChatTurn, conversation_html, error_event

if TYPE_CHECKING:
    import pandas as pd

    from citelab.widget._panel import SourcesPanel

__all__ = ["Chat"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


class Chat(StaticFallbackWidget):
    """A chat that answers with citations in a notebook; see the module docstring.

    ``service_or_agent_config``: an :class:`~citelab.answers.AnswerService`; an
    :class:`~citelab.agent.AgentConfig` (that agent answers); a mapping of agents; a path to
    an agents file (TOML/YAML); or ``None`` for the bundled agents. ``agent`` names the agent
    that answers new questions; ``user`` (a :class:`~citelab.corpus.Reader` or a user id) is
    who asks. ``feedback`` overrides the agent's ``feedback_enabled`` for the buttons.
    ``token_interval`` / ``max_batch_tokens`` tune how tokens are coalesced into messages.
    ``update_outputs`` rewrites the static HTML of every output showing the chat (and its
    panels) when a turn ends, so a saved or exported notebook shows the conversation;
    JupyterLab then redraws those views once per turn (the conversation is kept). Turn it
    off to keep the HTML from display time. ``pace``: ``"live"`` (default) streams as fast
    as the model writes; ``"demo"`` replays each answer at about 25 tokens per second (the
    offline model answers at once, which a demo cannot see); a number is seconds per token.
    ``model`` (``"openai:<model>"``, ``"anthropic:<model>"``, ``"extractive"``… or a model
    object) replaces every agent's. ``corpus`` (a JSONL file or a folder of documents) given
    without agents gets one agent of its own, as ``citelab serve --corpus`` does: named after
    the corpus (``notes`` for ``notes/``), with starter questions drawn from it
    (``Chat(corpus="notes/", model="openai:llama3.1")``); with agents given, it replaces
    their corpus.
    """

    _esm = bundle("widget_chat.js")
    _css = bundle("citelab.css")

    turns = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The current conversation's turns (``js/contract/model.js`` ``Turn``), settled state."""
    conversation_id = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    """The conversation follow-ups continue (``None`` before the first answer)."""
    agent = traitlets.Unicode("default").tag(sync=True)
    """The agent that answers new questions (follow-ups keep the conversation's)."""
    feedback_enabled = traitlets.Bool(False).tag(sync=True)
    """Show thumbs up/down under answered turns."""
    placeholder = traitlets.Unicode("Ask a question…").tag(sync=True)
    """The question box's placeholder."""
    show_sources = traitlets.Bool(True).tag(sync=True)
    """Show a Sources list inside the chat (panels can show it elsewhere too)."""
    starter_questions = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """Questions offered as chips before the first one (default: the agent's
    ``starter_questions``, e.g. drawn from a corpus given alone; ``[]`` offers none)."""
    _kernel_session = traitlets.Unicode("").tag(sync=True)
    """The session id of the kernel process that holds this chat: ``header.session`` of every
    message it sends (``""`` outside an IPython kernel). A message from another session means
    the kernel was restarted, which JupyterLab does not always say
    (``js/kernel/kernel_watch.js``)."""

    def __init__(
        self,
        service_or_agent_config: ServiceSource = None,
        agent: str = "default",
        user: Reader | str | None = None,
        *,
        feedback: bool | None = None,
        placeholder: str = "Ask a question…",
        show_sources: bool = True,
        token_interval: float = DEFAULT_INTERVAL,
        max_batch_tokens: int = DEFAULT_MAX_TOKENS,
        update_outputs: bool = True,
        pace: Pace = "live",
        model: str | Model | None = None,
        corpus: str | PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self._pace_seconds = pace_seconds(pace)
        service, agent = resolve_service(service_or_agent_config, agent, model=model, corpus=corpus)
        check_agent(service, agent)
        if feedback is None:
            feedback = service.agents[agent].feedback_enabled
        check_batching(token_interval, max_batch_tokens)
        self._service = service
        super().__init__(
            agent=agent,
            starter_questions=list(service.agents[agent].starter_questions),
            feedback_enabled=feedback,
            placeholder=placeholder,
            show_sources=show_sources,
            _kernel_session=kernel_session(),
            **kwargs,
        )
        self.user = reader_of(user)
        """Who asks (owner rules and access apply to this reader)."""
        self.token_interval = token_interval
        self.max_batch_tokens = max_batch_tokens
        self.update_outputs = update_outputs
        self.pace = pace
        """How answers stream: ``"live"``, ``"demo"`` or seconds per token."""
        self._history: list[ChatTurn] = []
        self._panels: list[SourcesPanel] = []
        self._tail: asyncio.Task[Answer] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._questions: set[asyncio.Task[Answer]] = set()
        self.on_msg(_route_message)

    # --- what users call -----------------------------------------------------------------------

    @property
    def service(self) -> AnswerService:
        """The answer service this chat runs."""
        return self._service

    def ask(self, question: str, *, followup: bool = False) -> asyncio.Task[Answer]:
        """Ask on the running event loop (Jupyter's) without blocking it.

        Returns the task: ``await chat.ask("...")`` gives the :class:`~citelab.answers.Answer`
        (or raises what made the turn fail, after the widget has shown the error). Outside
        a running loop use :meth:`ask_sync`.
        """
        loop = _running_loop()
        if loop is None:
            raise Conflict("no event loop is running here: use chat.ask_sync(...) in a script")
        question = self._accepted(question)
        return self._schedule(loop, question, followup)

    def ask_sync(self, question: str, *, followup: bool = False) -> Answer:
        """Ask and wait for the answer (scripts; no event loop may be running)."""
        if _running_loop() is not None:
            raise Conflict("ask_sync would block the running event loop: use `await chat.ask(...)`")
        question = self._accepted(question)
        return asyncio.run(self._run_turn(question, followup))

    def cancel(self) -> int:
        """Cancel the question being answered and those waiting; returns how many.

        The running turn ends with an ``error`` event (code ``cancelled``); awaiting its
        task raises :class:`asyncio.CancelledError`.
        """
        pending = [task for task in self._questions if not task.done()]
        for task in pending:
            task.cancel()
        return len(pending)

    async def wait(self) -> None:
        """Wait until every question asked so far is answered (or has failed), and every
        rating sent from the front end is recorded."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def rate(
        self, value: FeedbackValue, *, turn_id: str | None = None, comment: str | None = None
    ) -> LogEntry:
        """Rate an answered turn (the last one by default) through the feedback logger."""
        turn = self._turn(turn_id)
        answer = turn.answer
        if answer is None:
            raise Conflict(f"turn {turn.turn_id!r} has no answer to rate ({turn.status})")
        entry = await self._service.feedback.record(
            answer.conversation_id, answer.turn, value, comment, self.user
        )
        turn.feedback = {"value": value, **({"comment": comment} if comment else {})}
        self._sync(turn)
        return entry

    def new_conversation(self) -> None:
        """Cancel what runs and forget the current conversation: every view clears, and the
        next question starts a new one (the view's New conversation button)."""
        self.cancel()
        self.conversation_id = None
        self.turns = []
        self._emit(reset_message())
        self._refresh_all()

    @property
    def history(self) -> tuple[ChatTurn, ...]:
        """Every turn this chat ran, across conversations, oldest first."""
        return tuple(self._history)

    @property
    def last_answer(self) -> Answer | None:
        """The most recent finished answer (``None`` before the first one)."""
        done = [turn.answer for turn in self._history if turn.answer is not None]
        return done[-1] if done else None

    @property
    def last_message(self) -> AnswerMessage | None:
        """The most recent answer as the contract's :class:`~citelab.contract.AnswerMessage`."""
        answer = self.last_answer
        return answer.message if answer is not None else None

    def last_record(self) -> dict[str, Any]:
        """The most recent turn (answered or failed) as one flat dict for pandas."""
        if not self._history:
            raise NotFound("this chat has no turns yet: ask a question first")
        return self._history[-1].record()

    def to_pandas(self) -> pd.DataFrame:
        """One row per turn this chat ran (columns: ``RECORD_COLUMNS``)."""
        import pandas as pd

        rows = [turn.record() for turn in self._history]
        return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))

    @property
    def panels(self) -> tuple[SourcesPanel, ...]:
        """The Sources panels showing this chat's references."""
        return tuple(self._panels)

    def static_html(self) -> str:
        shown = [turn for turn in self._history if turn.turn_id in self._shown_ids()]
        return conversation_html(shown, empty="No question asked yet.")

    # --- panels --------------------------------------------------------------------------------

    def attach_panel(self, panel: SourcesPanel) -> None:
        """Send this chat's events to ``panel`` too (SourcesPanel does this itself)."""
        if panel not in self._panels:
            self._panels.append(panel)
        panel.turns = list(self.turns)

    def detach_panel(self, panel: SourcesPanel) -> None:
        if panel in self._panels:
            self._panels.remove(panel)

    @traitlets.observe("turns")
    def _mirror_turns(self, change: dict[str, Any]) -> None:
        for panel in self._panels:
            panel.turns = list(change["new"])

    @traitlets.validate("agent")
    def _agent_known(self, proposal: dict[str, Any]) -> str:
        name = str(proposal["value"])
        check_agent(self._service, name)
        return name

    @traitlets.observe("agent")
    def _offer_agents_starters(self, change: dict[str, Any]) -> None:
        self.starter_questions = list(self._service.agents[change["new"]].starter_questions)

    # --- front-end requests --------------------------------------------------------------------

    def handle_request(self, content: object) -> None:
        """Act on one front-end message (``ask`` or ``feedback``), answering with an ``ack``."""
        try:
            request = parse_chat_request(content)
        except InvalidInput as exc:
            self.send(ack_message(request_id_of(content), str(exc)))
            return
        if isinstance(request, AskRequest):
            self._handle_ask(request)
        elif isinstance(request, StopRequest):
            self.cancel()
            self.send(ack_message(request.request_id))
        elif isinstance(request, NewConversationRequest):
            self.new_conversation()
            self.send(ack_message(request.request_id))
        elif isinstance(request, DocumentRequest):
            self._start_background(self._handle_document(request))
        else:
            self._start_background(self._handle_feedback(request))

    def _handle_ask(self, request: AskRequest) -> None:
        try:
            question = self._accepted(request.question)
        except CitelabError as exc:
            self.send(ack_message(request.request_id, str(exc)))
            return
        self.send(ack_message(request.request_id))
        if not request.followup:
            self.cancel()  # a new question from the page replaces what is still streaming
        loop = _running_loop()
        if loop is None:  # no kernel loop (a script driving the comm): answer in place
            with contextlib.suppress(Exception):  # its error event has told the front end
                asyncio.run(self._run_turn(question, request.followup))
            return
        self._schedule(loop, question, request.followup)

    async def _handle_feedback(self, request: FeedbackRequest) -> None:
        try:
            await self.rate(request.value, turn_id=request.turn_id, comment=request.comment)
        except Exception as exc:
            if not isinstance(exc, CitelabError):
                _log.warning("citelab chat feedback failed", exc_info=exc)
            self.send(ack_message(request.request_id, error_event(exc).message))
            return
        self.send(ack_message(request.request_id))

    async def _handle_document(self, request: DocumentRequest) -> None:
        agent = self._conversation_agent()
        try:
            document = await read_document(self._service, agent, request.uri, self.user)
        except Exception as exc:
            if not isinstance(exc, CitelabError):
                _log.warning("citelab chat document lookup failed", exc_info=exc)
            self.send(ack_message(request.request_id, error_event(exc).message))
            return
        self.send(ack_message(request.request_id, document=document.model_dump(mode="json")))

    def _conversation_agent(self) -> str:
        """The agent of the conversation shown (follow-ups are pinned to it)."""
        shown = self._shown_ids()
        for turn in reversed(self._history):
            if turn.turn_id in shown:
                return turn.agent
        return self.agent

    def _start_background(self, work: Coroutine[Any, Any, None]) -> None:
        loop = _running_loop()
        if loop is None:
            asyncio.run(work)
            return
        self._track(loop.create_task(work))

    # --- one turn ------------------------------------------------------------------------------

    def _accepted(self, question: object) -> str:
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput("question: must not be empty or whitespace only")
        limit = self._service.max_question_chars
        if len(question) > limit:
            raise InvalidInput(
                f"question: {len(question)} characters is too long (at most {limit})"
            )
        return question.strip()

    def _schedule(
        self, loop: asyncio.AbstractEventLoop, question: str, followup: bool
    ) -> asyncio.Task[Answer]:
        task = self._track(loop.create_task(self._run_after(self._tail, question, followup)))
        self._tail = task
        self._questions.add(task)
        task.add_done_callback(self._questions.discard)
        return task

    def _track(self, task: asyncio.Task[_T]) -> asyncio.Task[_T]:
        # Held until done (the loop keeps only weak references to tasks). The widget shows
        # a failure, so an unawaited task must not also be logged as never retrieved.
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_retrieve_exception)
        return task

    async def _run_after(
        self, previous: asyncio.Task[Answer] | None, question: str, followup: bool
    ) -> Answer:
        if previous is not None and not previous.done():
            await asyncio.wait([previous])  # one turn at a time, in the order asked
        return await self._run_turn(question, followup)

    async def _run_turn(self, question: str, followup: bool) -> Answer:
        turn = self._start_turn(question, followup)
        conversation_id = self.conversation_id if followup else None
        batcher = TokenBatcher(
            lambda text: self._send_tokens(turn, text),
            interval=self.token_interval,
            max_tokens=self.max_batch_tokens,
        )
        pacer = Pacer(self._pace_seconds) if self._pace_seconds > 0 else None

        def on_references(references: list[Reference]) -> None:
            self._paced(pacer, lambda: self._send_references(turn, batcher, references), False)

        def on_token(text: str) -> None:
            self._paced(pacer, lambda: self._receive_token(turn, batcher, text), True)

        try:
            answer = await self._service.answer(
                turn.agent,
                question,
                conversation_id,
                self.user,
                on_references=on_references,
                on_token=on_token,
            )
            if pacer is not None:
                await pacer.drain()
        except (Exception, asyncio.CancelledError) as exc:
            if pacer is not None:
                pacer.close()
            batcher.flush()
            self._fail_turn(turn, batcher, exc)
            raise
        if pacer is not None:
            pacer.close()
        batcher.flush()
        self._finish_turn(turn, batcher, answer)
        return answer

    @staticmethod
    def _paced(pacer: Pacer | None, send: Callable[[], None], token: bool) -> None:
        if pacer is None:
            send()
        else:
            pacer.put(send, token=token)

    def _start_turn(self, question: str, followup: bool) -> ChatTurn:
        turn = ChatTurn(
            turn_id=uuid.uuid4().hex[:16],
            question=question,
            followup=followup,
            agent=self.agent,
            started_at=time.monotonic(),
        )
        self._history.append(turn)
        if followup:
            self.turns = [*self.turns, turn.to_trait()]
        else:
            self.conversation_id = None
            self.turns = [turn.to_trait()]
        self._emit(turn_start_message(turn.turn_id, question, followup))
        return turn

    def _send_references(
        self, turn: ChatTurn, batcher: TokenBatcher, references: list[Reference]
    ) -> None:
        batcher.flush()  # tokens before this event go out before it
        turn.set_references(references)
        self._emit(references_message(turn.turn_id, references))
        self._sync(turn)

    def _receive_token(self, turn: ChatTurn, batcher: TokenBatcher, text: str) -> None:
        turn.add_text(text, time.monotonic())
        batcher.add(text)

    def _send_tokens(self, turn: ChatTurn, text: str) -> None:
        self._emit(token_message(turn.turn_id, text))

    def _finish_turn(self, turn: ChatTurn, batcher: TokenBatcher, answer: Answer) -> None:
        turn.tokens, turn.token_messages = batcher.tokens, batcher.messages
        turn.finish(answer, time.monotonic())
        if self._is_shown(turn):
            self.conversation_id = answer.conversation_id
        self._emit(done_message(turn.turn_id, answer.to_done_event(), rounds=turn.inspection))
        self._sync(turn)
        self._refresh_all()

    def _fail_turn(self, turn: ChatTurn, batcher: TokenBatcher, exc: BaseException) -> None:
        turn.tokens, turn.token_messages = batcher.tokens, batcher.messages
        event = error_event(exc)
        if event.code == "internal_error":
            _log.warning("citelab chat turn %s failed", turn.turn_id, exc_info=exc)
        turn.fail(event, time.monotonic())
        self._emit(error_message(turn.turn_id, event))
        self._sync(turn)
        self._refresh_all()

    # --- state and transport -------------------------------------------------------------------

    def _emit(self, message: dict[str, Any]) -> None:
        """Send one event to the chat's front end and to every panel's."""
        self.send(message)
        for panel in self._panels:
            panel.send(message)

    def _sync(self, turn: ChatTurn) -> None:
        """Write a turn's settled state into the ``turns`` trait (when still shown)."""
        if not self._is_shown(turn):
            return  # a new question or new_conversation() cleared it meanwhile
        self.turns = [
            turn.to_trait() if shown.get("turn_id") == turn.turn_id else shown
            for shown in self.turns
        ]

    def _is_shown(self, turn: ChatTurn) -> bool:
        return turn.turn_id in self._shown_ids()

    def _shown_ids(self) -> set[str]:
        return {str(shown.get("turn_id")) for shown in self.turns}

    def _turn(self, turn_id: str | None) -> ChatTurn:
        if turn_id is None:
            if not self._history:
                raise NotFound("this chat has no turns yet: ask a question first")
            return self._history[-1]
        for turn in self._history:
            if turn.turn_id == turn_id:
                return turn
        raise NotFound(f"this chat has no turn {turn_id!r}")

    def _refresh_all(self) -> None:
        if not self.update_outputs:
            return
        self.refresh_static()
        for panel in self._panels:
            panel.refresh_static()


def _route_message(widget: Chat, content: object, buffers: object) -> None:
    widget.handle_request(content)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _retrieve_exception(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


def kernel_session() -> str:
    """The session id of the IPython kernel this process is (``""`` when it is none)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - anywidget brings IPython
        return ""
    kernel = getattr(get_ipython(), "kernel", None)
    session = getattr(getattr(kernel, "session", None), "session", "")
    return session if isinstance(session, str) else ""
