"""Support judges: does a piece of evidence support a statement?

Every support decision of the citation scorers goes through a :class:`Judge`, so the same
scorer runs offline (:class:`TrainedLexicalJudge`, the default, :data:`DEFAULT_JUDGE`, or
:class:`LexicalJudge`), with any OpenAI-compatible model (:class:`LLMJudge`), with an NLI
model (``nli``), or with one someone registers (:func:`register_judge`, :data:`JUDGES`).
Judges are built from their configuration (``{"name": "lexical", "threshold": 0.8}``)
so a run's log can rebuild them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from citelab._async import run_blocking
from citelab._errors import ConfigError, ModelError
from citelab._lexicon import JUDGE_FUNCTION_WORDS as _STOPWORDS
from citelab._lexicon import WORD as _WORD
from citelab._registry import Registry
from citelab.contract import MARKER_TEXT as _MARKER
from citelab.evals.judges._deferring import VerdictPending, deferring
from citelab.evals.judges._prompts import NAMED_PROMPTS, judge_messages
from citelab.evals.judges._support_model import TrainedLexicalJudge

__all__ = [
    "DEFAULT_JUDGE",
    "DEFAULT_JUDGE_PROMPT",
    "JUDGES",
    "FunctionJudge",
    "Judge",
    "LLMJudge",
    "LexicalJudge",
    "build_judge",
    "content_terms",
    "judge_names",
    "register_judge",
]

#: The judge every scorer, ``citelab score`` and a suite use unless told otherwise: the
#: trained offline judge (:class:`TrainedLexicalJudge`), which agrees with people on real
#: text far better than :class:`LexicalJudge` (its card: ``data/cards/lexical_trained.json``).
DEFAULT_JUDGE = "lexical_trained"


@runtime_checkable
class Judge(Protocol):
    """Decides whether ``evidence`` supports ``statement`` (both plain text, no markers)."""

    name: str

    def supports(self, statement: str, evidence: str) -> bool: ...

    def config(self) -> dict[str, Any]:
        """The arguments that rebuild this judge with :func:`build_judge` (JSON-able)."""
        ...


def content_terms(text: str) -> frozenset[str]:
    """The content words of ``text``: NFKC, case-folded, stop words and markers removed."""
    return _content_terms(text)


# In ASCII text \w is [A-Za-z0-9_]: the words are what is left between the other characters.
_ASCII_NON_WORD = str.maketrans(
    {chr(code): " " for code in range(128) if not (chr(code).isalnum() or chr(code) == "_")}
)


# The memos below hold the texts of the last few hundred answers: the scorers ask about the
# same statements and passages within an answer, rarely across answers, so bigger memos
# would only keep more for the interpreter to take apart at the end (the figures:
# docs/performance.md, "Judge memos sized to a few hundred answers").
@lru_cache(maxsize=8192)
def _content_terms(text: str) -> frozenset[str]:
    # Shortcuts that change nothing: no "[" means no marker; ASCII is its own NFKC form, its
    # case folding stays ASCII, and its \w+ words are found by str.translate and str.split
    # (docs/performance.md, "Lexical judge", has the figure).
    plain = _MARKER.sub(" ", text) if "[" in text else text
    if plain.isascii():
        words = plain.casefold().translate(_ASCII_NON_WORD).split()
    else:
        words = _WORD.findall(unicodedata.normalize("NFKC", plain).casefold())
    return frozenset(words).difference(_STOPWORDS, ("_",))


@lru_cache(maxsize=2048)  # a turn asks about the same passages again and again
def _evidence_terms(evidence: str) -> frozenset[str]:
    # Evidence is several passages joined by line breaks, in ever new combinations; words never
    # span a line break, so the union of the (cached) lines' terms is the text's terms.
    lines = evidence.split("\n")
    if len(lines) == 1:
        return _content_terms(evidence)
    return frozenset().union(*(_content_terms(line) for line in lines))


class LexicalJudge:
    """Offline, deterministic: supported when enough of the statement's content words occur.

    Support = |terms(statement) ∩ terms(evidence)| / |terms(statement)| ≥ ``threshold``, where
    terms are the NFKC case-folded words minus a short list of en/de/fr function words.
    Numbers count as words, so "120 credits" is not supported by "180 credits". A statement
    with no content words is never supported (there is nothing to check).
    """

    name = "lexical"

    def __init__(self, threshold: float = 0.75) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigError(f"judge lexical: threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold

    def supports(self, statement: str, evidence: str) -> bool:
        return self.overlap(statement, evidence) >= self.threshold

    def overlap(self, statement: str, evidence: str) -> float:
        """Share of the statement's content words found in the evidence (0 when it has none)."""
        claim = _content_terms(statement)
        if not claim:
            return 0.0
        return len(claim & _evidence_terms(evidence)) / len(claim)

    def supports_passages(self, statement: str, passages: Sequence[str]) -> bool:
        """``supports(statement, "\n".join(passages))``, from each passage's cached terms.

        The citation scorers ask about the same few passages in ever new combinations; the
        terms of a joined text are the union of its lines' terms, so nothing is joined or
        re-read. A subclass that overrides :meth:`supports` is asked through it.
        """
        if type(self).supports is not LexicalJudge.supports:
            return self.supports(statement, "\n".join(passages))
        claim = _content_terms(statement)
        if not claim:
            return False
        # The claim's words in none of the passages: no union of the passages is built.
        missing = claim.difference(*map(_evidence_terms, passages))
        return (len(claim) - len(missing)) / len(claim) >= self.threshold

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "threshold": self.threshold}


DEFAULT_JUDGE_PROMPT = """\
You check whether a statement is fully supported by evidence passages.
Answer with exactly one word: "yes" if every fact in the statement is stated in or directly
follows from the evidence, otherwise "no".

Evidence:
{evidence}

Statement:
{statement}

Answer (yes or no):"""


_LLM_NEEDS_A_MODEL = """\
judge llm needs a model: name it in the judge's configuration, e.g. on the command line
  --judge '{"name": "llm", "model": "gpt-4o-mini"}'
or with an endpoint of your own (vLLM, Ollama, llama.cpp, citelab serve-model)
  --judge '{"name": "llm", "model": "qwen2.5", "base_url": "http://127.0.0.1:8000/v1"}'
and in a suite file: judge = {name = "llm", model = "gpt-4o-mini"}. Its other keys: base_url,
api_key (default: $OPENAI_API_KEY), prompt, cache_dir, timeout, concurrency."""


@dataclass
class _LoopState:
    """What an LLM judge keeps per event loop: its bound, and the questions being asked."""

    slots: asyncio.Semaphore
    asking: dict[str, asyncio.Future[bool]] = field(default_factory=dict)


class LLMJudge:
    """Asks an OpenAI-compatible chat model "does the evidence support the statement?".

    Any endpoint the ``openai`` SDK can reach works (OpenAI, vLLM, llama.cpp, ``citelab
    serve-model``). The prompt is part of the configuration (it is written into the run's
    log and report): a template with ``{statement}`` and ``{evidence}``, or ``"minicheck"``
    (MiniCheck's layout, for fact-checking models; see ``_prompts.py``). Verdicts are cached
    by request, in memory and, with ``cache_dir``, on disk, so a re-score never re-asks the
    model.

    Calls go through the runner's own model adapter (:class:`citelab.models.OpenAIModel`:
    async SDK clients shared per event loop, the body read without the SDK's parse), at most
    ``concurrency`` in flight per event loop. ``citelab score``, ``citelab eval`` and
    ``rescore`` score answers concurrently in one event loop (see
    :func:`~citelab.evals.judges.score_deferring`); :meth:`supports_many` and :meth:`ask` do
    the same for a batch of questions. A lone :meth:`supports` outside them asks at once, on an
    event loop and connection of its own.
    """

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str = DEFAULT_JUDGE_PROMPT,
        cache_dir: str | None = None,
        timeout: float = 60.0,
        concurrency: int = 8,
    ) -> None:
        if not model:
            raise ConfigError(_LLM_NEEDS_A_MODEL)
        if prompt not in NAMED_PROMPTS and (
            "{statement}" not in prompt or "{evidence}" not in prompt
        ):
            raise ConfigError(
                "judge llm: prompt must contain {statement} and {evidence}, or name one of "
                f"{', '.join(NAMED_PROMPTS)}"
            )
        if concurrency < 1:
            raise ConfigError(f"judge llm: concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        self.model = model
        self.base_url = base_url
        self.prompt = prompt
        self.cache_dir = cache_dir
        self.timeout = timeout
        self._api_key = api_key
        self._memo: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._adapter: Any = None
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    def supports(self, statement: str, evidence: str) -> bool:
        key, _ = self._question(statement, evidence)
        cached = self._lookup(key)
        if cached is not None:
            return cached
        if deferring():  # a concurrent scoring asks it and scores the answer again
            raise VerdictPending(self, statement, evidence)
        return self.supports_many([(statement, evidence)])[0]

    def supports_many(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """Verdicts for ``(statement, evidence)`` pairs, asked ``concurrency`` at a time."""
        return run_blocking(self._ask_all(pairs))

    async def ask(self, statement: str, evidence: str) -> bool:
        """The verdict, from the cache or asked of the model (within ``concurrency``)."""
        key, request = self._question(statement, evidence)
        cached = self._lookup(key)
        if cached is not None:
            return cached
        asking = self._loop_state().asking
        task = asking.get(key)
        if task is None:  # two answers asking one question at once ask the model once
            task = asking[key] = asyncio.ensure_future(self._asked(key, request))
            task.add_done_callback(lambda _: asking.pop(key, None))
        return await task

    async def _asked(self, key: str, request: dict[str, Any]) -> bool:
        async with self._loop_state().slots:
            reply = await self._reply(request)
        verdict = _parse_verdict(reply)
        self._store(key, request, verdict)
        return verdict

    async def aclose(self) -> None:
        """Close the connections the running event loop holds."""
        if self._adapter is not None:
            await self._adapter.aclose()

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "prompt": self.prompt,
            "cache_dir": self.cache_dir,
            "timeout": self.timeout,
            "concurrency": self.concurrency,
        }

    async def _ask_all(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        try:
            return list(await asyncio.gather(*(self.ask(s, e) for s, e in pairs)))
        finally:
            await self.aclose()

    def _question(self, statement: str, evidence: str) -> tuple[str, dict[str, Any]]:
        """The cache key and the request (the key is the request's hash)."""
        request = {
            "model": self.model,
            "messages": judge_messages(self.prompt, statement, evidence),
            "temperature": 0,
            "max_tokens": 3,
        }
        return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest(), request

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _LoopState(asyncio.Semaphore(self.concurrency))
        return state

    async def _reply(self, request: dict[str, Any]) -> str:
        from citelab.models import TextDelta

        text: list[str] = []
        async for delta in self._openai().stream(request["messages"]):
            if isinstance(delta, TextDelta):
                text.append(delta.text)
        return "".join(text)

    def _openai(self) -> Any:
        with self._lock:
            if self._adapter is None:
                from citelab.models import OpenAIModel

                self._adapter = OpenAIModel(
                    self.model,
                    base_url=self.base_url,
                    api_key=self._api_key or ("not-needed" if self.base_url else None),
                    timeout=self.timeout,
                    stream=False,
                    temperature=0,
                    options={"max_tokens": 3},
                    name="judge llm",
                )
            return self._adapter

    def _lookup(self, key: str) -> bool | None:
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        path = self._cache_path(key)
        if path is not None and path.is_file():
            stored: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            verdict = bool(stored["verdict"])
            with self._lock:
                self._memo[key] = verdict
            return verdict
        return None

    def _store(self, key: str, request: dict[str, Any], verdict: bool) -> None:
        with self._lock:
            self._memo[key] = verdict
        path = self._cache_path(key)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = {"request": request, "verdict": verdict}
            # Its own temporary name: Ray workers (other processes) and threads sharing the
            # cache may store the same verdict at once.
            tmp = path.with_name(f"{key}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(payload), encoding="utf-8")
            tmp.replace(path)

    def _cache_path(self, key: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return Path(self.cache_dir) / "judge" / key[:2] / f"{key}.json"


def _parse_verdict(reply: str) -> bool:
    words: list[str] = _WORD.findall(reply.casefold())
    if not words or words[0] not in {"yes", "no"}:
        raise ModelError(f"judge llm: expected 'yes' or 'no', got {reply[:80]!r}")
    return words[0] == "yes"


JUDGES: Registry[Callable[..., Judge]] = Registry("judge")
"""Every judge factory by name (:class:`~citelab.Registry`): ``JUDGES.build("lexical")``."""


def register_judge(
    name: str,
    factory: Callable[..., Judge] | str,
    *,
    replace: bool = False,
    description: str | None = None,
) -> None:
    """Make ``factory(**config)`` buildable as ``{"name": name, **config}``:
    ``JUDGES.register`` (``factory`` may be a ``module:attr`` imported when first built)."""
    JUDGES.register(name, factory, replace=replace, description=description)


def judge_names() -> list[str]:
    """The registered names, sorted: ``JUDGES.names()``."""
    return JUDGES.names()


def build_judge(spec: str | dict[str, Any] | Judge) -> Judge:
    """A judge from its name, its configuration dict, or an instance (returned as is).

    A name may also be ``module:attr`` (in the CLI and in suite files): ``attr`` is a
    :class:`Judge` instance (used as is), a class (built with the rest of the configuration)
    or a function ``(statement, evidence) -> bool`` (wrapped in a :class:`FunctionJudge`).
    """
    if isinstance(spec, Judge):
        return spec
    config = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = config.pop("name", None)
    if not isinstance(name, str):
        raise JUDGES.unknown(name)
    if ":" in name:  # never a registered name
        return _imported_judge(name, config)
    return JUDGES.build(name, **config)


def _imported_judge(spec: str, config: dict[str, Any]) -> Judge:
    target = JUDGES.get(spec)  # imported: a Judge, a class of them, or a function
    if isinstance(target, type):
        try:
            built = target(**config)
        except TypeError as exc:
            raise ConfigError(f"judge {spec!r}: bad options {sorted(config)}: {exc}") from exc
        if not isinstance(built, Judge):
            raise ConfigError(f"judge {spec!r}: {target.__name__} does not build a Judge")
        return built
    if config:
        raise ConfigError(f"judge {spec!r}: takes no configuration, got {sorted(config)}")
    if isinstance(target, Judge):
        return target
    if callable(target):
        return FunctionJudge(target, spec)
    raise ConfigError(f"judge {spec!r}: neither a Judge nor a callable")


class FunctionJudge:
    """A plain function ``(statement, evidence) -> bool`` as a judge, named ``module:attr``."""

    def __init__(self, function: Callable[[str, str], object], name: str) -> None:
        self.function = function
        self.name = name

    def supports(self, statement: str, evidence: str) -> bool:
        verdict = self.function(statement, evidence)
        if not isinstance(verdict, bool | int):
            raise ConfigError(
                f"judge {self.name}: must return True or False, got {type(verdict).__name__}"
            )
        return bool(verdict)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


register_judge("lexical", LexicalJudge)
register_judge("llm", LLMJudge)
register_judge("lexical_trained", TrainedLexicalJudge)
