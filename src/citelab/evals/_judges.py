"""Support judges: does a piece of evidence support a statement?

Every support decision of the citation scorers goes through a :class:`Judge`, so the same
scorer runs offline (:class:`LexicalJudge`, the default), with any OpenAI-compatible model
(:class:`LLMJudge`), or with an NLI model someone registers later (:func:`register_judge`).
Judges are built from their configuration (``{"name": "lexical", "threshold": 0.8}``) so a
run's log can rebuild them.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from citelab._errors import ConfigError, ModelError

__all__ = [
    "DEFAULT_JUDGE_PROMPT",
    "Judge",
    "LLMJudge",
    "LexicalJudge",
    "build_judge",
    "content_terms",
    "judge_names",
    "register_judge",
]


@runtime_checkable
class Judge(Protocol):
    """Decides whether ``evidence`` supports ``statement`` (both plain text, no markers)."""

    name: str

    def supports(self, statement: str, evidence: str) -> bool: ...

    def config(self) -> dict[str, Any]:
        """The arguments that rebuild this judge with :func:`build_judge` (JSON-able)."""
        ...


# Function words of the three fixture languages: they carry no claim, so they neither help
# nor hurt support. Kept short on purpose: a content word wrongly listed here would make the
# judge more lenient, so only unambiguous function words are listed (negations are not:
# "fees are not due" must not be supported by "fees are due").
_FUNCTION_WORDS = """
    a an and are as at be been but by can could did do does for from had has have how i if in
    into is it its might must of on or our shall should so such than that the their them
    then there these they this those to too was we were what when where which while who whom
    why will with would you your yes also only very just about any all each more most der die
    das den dem des ein eine einer eines einem einen und oder ist sind war wird werden im in am
    an auf aus bei mit nach von vor zu zum zur für über unter auch als wie es sie er wir
    ihr ich du man kann können muss müssen soll le la les un une des du de et ou est sont été
    être au aux en dans par pour sur avec sans que qui quoi ce cet cette ces il elle ils
    elles nous vous on se sa son ses leur leurs y
"""
_STOPWORDS = frozenset(_FUNCTION_WORDS.split())
_WORD = re.compile(r"\w+")
_MARKER = re.compile(r"\[\d+(?:[-–]\d+)?(?: *, *\d+(?:[-–]\d+)?)*\]")


def content_terms(text: str) -> frozenset[str]:
    """The content words of ``text``: NFKC, case-folded, stop words and markers removed."""
    return _content_terms(text)


@lru_cache(maxsize=65_536)
def _content_terms(text: str) -> frozenset[str]:
    normal = unicodedata.normalize("NFKC", _MARKER.sub(" ", text)).casefold()
    return frozenset(w for w in _WORD.findall(normal) if w not in _STOPWORDS and w != "_")


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


class LLMJudge:
    """Asks an OpenAI-compatible chat model "does the evidence support the statement?".

    Any endpoint the ``openai`` SDK can reach works (OpenAI, vLLM, llama.cpp, ``citelab
    serve-model``). The prompt is part of the configuration (it is written into the run's
    log and report). Verdicts are cached by request, in memory and, with ``cache_dir``, on
    disk, so a re-score never re-asks the model.
    """

    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str = DEFAULT_JUDGE_PROMPT,
        cache_dir: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        if "{statement}" not in prompt or "{evidence}" not in prompt:
            raise ConfigError("judge llm: prompt must contain {statement} and {evidence}")
        self.model = model
        self.base_url = base_url
        self.prompt = prompt
        self.cache_dir = cache_dir
        self.timeout = timeout
        self._api_key = api_key
        self._memo: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._client: Any = None

    def supports(self, statement: str, evidence: str) -> bool:
        request = self._request(statement, evidence)
        key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        cached = self._lookup(key)
        if cached is not None:
            return cached
        verdict = _parse_verdict(self._ask(request))
        self._store(key, request, verdict)
        return verdict

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "prompt": self.prompt,
            "cache_dir": self.cache_dir,
            "timeout": self.timeout,
        }

    def _request(self, statement: str, evidence: str) -> dict[str, Any]:
        content = self.prompt.format(statement=statement, evidence=evidence)
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0,
            "max_tokens": 3,
        }

    def _ask(self, request: dict[str, Any]) -> str:
        import openai

        client = self._openai()
        try:
            response = client.chat.completions.create(**request)
        except openai.OpenAIError as exc:
            raise ModelError(f"judge llm ({self.base_url or 'openai'}): {exc}") from exc
        if not response.choices:
            raise ModelError(f"judge llm ({self.base_url or 'openai'}): response had no choices")
        return str(response.choices[0].message.content or "")

    def _openai(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self._api_key or "not-needed",
                timeout=self.timeout,
                max_retries=2,
            )
        return self._client

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
            tmp = path.with_suffix(".tmp")
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


_JUDGES: dict[str, Callable[..., Judge]] = {}


def register_judge(name: str, factory: Callable[..., Judge], *, replace: bool = False) -> None:
    """Make ``factory(**config)`` buildable as ``{"name": name, **config}``."""
    if name in _JUDGES and not replace:
        raise ConfigError(f"judge {name!r} is already registered (pass replace=True)")
    _JUDGES[name] = factory


def judge_names() -> list[str]:
    return sorted(_JUDGES)


def build_judge(spec: str | dict[str, Any] | Judge) -> Judge:
    """A judge from its name, its configuration dict, or an instance (returned as is)."""
    if isinstance(spec, Judge):
        return spec
    config = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = config.pop("name", None)
    if not isinstance(name, str) or name not in _JUDGES:
        raise ConfigError(f"unknown judge {name!r} (registered: {', '.join(judge_names())})")
    try:
        return _JUDGES[name](**config)
    except TypeError as exc:
        raise ConfigError(f"judge {name}: bad configuration {config}: {exc}") from exc


register_judge("lexical", LexicalJudge)
register_judge("llm", LLMJudge)
