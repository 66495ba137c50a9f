"""An entailment (NLI) model as a support judge, run in this process: ``{"name": "nli",
"model": FOLDER}``.

It needs the optional extra ``nli`` (PyTorch and Hugging Face ``transformers``: ``pip install
'citelab[nli]'``), imported on first use, and weights already on this machine: a folder, or a
model id already in the local Hugging Face cache. Nothing is ever downloaded (every load passes
``local_files_only=True``). Two kinds of model are read:

* **A seq2seq model (T5), the way ALCE reads TRUE** (``google/t5_xxl_true_nli_mixture``, ALCE's
  citation judge): the input text is exactly ``premise: {evidence} hypothesis: {statement}``,
  not truncated; the output is generated greedily (at most 10 new tokens) and decoded without
  special tokens; the statement is supported when that text is exactly ``1`` (ALCE's
  ``eval.py``, ``_run_nli_autoais``). :meth:`NLIJudge.score` is the probability of the token
  ``1`` at the first decoding step.
* **A sequence classifier** (an MNLI model such as DeBERTa or RoBERTa, or MiniCheck's): the
  evidence and the statement as a text pair (``input_format="minicheck"``: MiniCheck's one
  text, evidence, end-of-sequence token, statement); the score is the softmax probability of
  the entailment label, found by name in the model's ``id2label`` (``entailment``,
  ``supported``…) or given as ``label``; supported when that label wins.

With ``threshold``, either kind says supported when the score reaches it instead (the seq2seq
model then needs one decoding step, not a generation).

Verdicts are cached per (statement, evidence). :meth:`NLIJudge.supports_many` and
:meth:`NLIJudge.score_many` run many pairs in batches of ``batch_size``; scored inside
:func:`~citelab.evals.judges.score_deferring` (``citelab score`` and ``eval`` do), the
judge defers, and the questions of many answers are batched the same way.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from citelab._errors import ConfigError, InvalidInput, MissingDependency
from citelab.evals.judges._deferring import VerdictPending, deferring
from citelab.evals.judges._judges import register_judge

__all__ = ["TRUE_INPUT", "NLIJudge"]

TRUE_INPUT = "premise: {evidence} hypothesis: {statement}"
"""The input text of ALCE's TRUE judge (a seq2seq model), filled with ``str.format``."""

InputFormat = Literal["auto", "true", "pair", "minicheck"]
_INPUT_FORMATS: tuple[str, ...] = ("auto", "true", "pair", "minicheck")
_DTYPES = ("float32", "bfloat16", "float16")
# ALCE generates at most 10 new tokens and compares the decoded text with "1".
_TRUE_MAX_NEW_TOKENS = 10
_TRUE_SUPPORTED = "1"
# Label names that mean "the evidence supports the statement" in NLI and fact-checking models.
_SUPPORT_LABELS = ("entailment", "entailed", "entail", "supported", "support", "consistent")
# Tokenizers that set no length limit report a huge one; then the model's positions decide.
_NO_LIMIT = 1_000_000


class _Verdict(NamedTuple):
    supported: bool
    score: float


class NLIJudge:
    """An NLI model's verdicts, computed here; see the module docs.

    ``model``: a folder with the weights (or a model id already in the local Hugging Face
    cache). ``device``: where the model runs (``cpu``, ``cuda``, ``cuda:1``, ``mps``).
    ``dtype``: ``float32``, ``bfloat16`` (what ALCE loaded TRUE in; half the memory) or
    ``float16``. ``batch_size``: pairs per forward pass. ``max_length``: tokens per input;
    longer evidence is cut at its end, the statement is kept whole (default: no cut for a
    seq2seq model, as ALCE; the tokenizer's limit for a classifier). ``threshold``: supported
    when the score reaches it (default: the model's own decision). ``label``: what the model
    says for "supported": a classifier's label name or index, a seq2seq model's output text
    (default: ``1``). ``input_format``: ``auto`` (``true`` for seq2seq, ``pair`` for a
    classifier), ``true``, ``pair`` or ``minicheck``.
    """

    name = "nli"

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 8,
        max_length: int | None = None,
        threshold: float | None = None,
        label: str | int | None = None,
        input_format: InputFormat = "auto",
    ) -> None:
        if model is None:
            raise ConfigError(
                'judge nli needs the folder of its model: {"name": "nli", "model": "/path/to/it"}'
            )
        _check_options(dtype, batch_size, max_length, threshold, input_format)
        _require_runtime()
        self.model = model
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.max_length = max_length
        self.threshold = threshold
        self.label = label
        self.input_format = input_format
        self._path = _model_location(model)
        # Deferred scoring keeps ``concurrency`` answers waiting: a batch's worth.
        self.concurrency = batch_size
        self._runtime: _Runtime | None = None
        self._memo: dict[bytes, _Verdict] = {}
        self._lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batching] = (
            weakref.WeakKeyDictionary()
        )

    def supports(self, statement: str, evidence: str) -> bool:
        known = self._memo.get(_key(statement, evidence))
        if known is not None:
            return known.supported
        if deferring():  # a concurrent scoring batches it with other answers' questions
            raise VerdictPending(self, statement, evidence)
        return self._verdicts([(statement, evidence)])[0].supported

    def score(self, statement: str, evidence: str) -> float:
        """The model's probability that ``evidence`` supports ``statement``."""
        return self._verdicts([(statement, evidence)])[0].score

    def supports_many(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """Verdicts for ``(statement, evidence)`` pairs, computed ``batch_size`` at a time."""
        return [verdict.supported for verdict in self._verdicts(pairs)]

    def score_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Scores for ``(statement, evidence)`` pairs, computed ``batch_size`` at a time."""
        return [verdict.score for verdict in self._verdicts(pairs)]

    async def ask(self, statement: str, evidence: str) -> bool:
        """The verdict, from the cache or computed in a batch with the questions other tasks
        of the running event loop ask meanwhile (the model runs in a worker thread)."""
        key = _key(statement, evidence)
        known = self._memo.get(key)
        if known is not None:
            return known.supported
        batching = self._batching()
        waiting = batching.waiting.get(key)
        if waiting is None:
            waiting = batching.waiting[key] = asyncio.get_running_loop().create_future()
            batching.pairs[key] = (statement, evidence)
            if batching.flusher is None:
                batching.flusher = asyncio.ensure_future(self._flush(batching))
        return (await waiting).supported

    async def aclose(self) -> None:
        """Nothing to close: the model stays loaded for the judge's next questions."""

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "threshold": self.threshold,
            "label": self.label,
            "input_format": self.input_format,
        }

    def _verdicts(self, pairs: Sequence[tuple[str, str]]) -> list[_Verdict]:
        keys = [_key(statement, evidence) for statement, evidence in pairs]
        todo = {key: pair for key, pair in zip(keys, pairs, strict=True) if key not in self._memo}
        if todo:
            self._compute(todo)
        return [self._memo[key] for key in keys]

    def _compute(self, todo: dict[bytes, tuple[str, str]]) -> None:
        """Run the model on every pair of ``todo`` (in batches) and remember the verdicts."""
        with self._lock:  # one forward pass at a time: the model uses every core already
            runtime = self._loaded()
            keys = list(todo)
            for start in range(0, len(keys), self.batch_size):
                batch = keys[start : start + self.batch_size]
                verdicts = runtime.run([todo[key] for key in batch])
                self._memo.update(zip(batch, verdicts, strict=True))

    def _loaded(self) -> _Runtime:
        if self._runtime is None:
            self._runtime = _load(self)
        return self._runtime

    def _batching(self) -> _Batching:
        loop = asyncio.get_running_loop()
        batching = self._loops.get(loop)
        if batching is None:
            batching = self._loops[loop] = _Batching()
        return batching

    async def _flush(self, batching: _Batching) -> None:
        """Compute the waiting questions a batch at a time, each batch once every task that
        was ready has asked its question."""
        try:
            while batching.pairs:
                size = -1
                while size != len(batching.pairs) and len(batching.pairs) < self.batch_size:
                    size = len(batching.pairs)
                    await asyncio.sleep(0)
                keys = list(batching.pairs)[: self.batch_size]
                todo = {key: batching.pairs.pop(key) for key in keys}
                try:
                    await asyncio.to_thread(self._compute, todo)
                except Exception as exc:
                    for key in keys:
                        batching.waiting.pop(key).set_exception(exc)
                    continue
                for key in keys:
                    batching.waiting.pop(key).set_result(self._memo[key])
        finally:
            batching.flusher = None


@dataclass
class _Batching:
    """The questions waiting in one event loop, and the task computing them."""

    pairs: dict[bytes, tuple[str, str]] = field(default_factory=dict)
    waiting: dict[bytes, asyncio.Future[_Verdict]] = field(default_factory=dict)
    flusher: asyncio.Future[None] | None = None


def _key(statement: str, evidence: str) -> bytes:
    if not isinstance(statement, str) or not isinstance(evidence, str):
        raise InvalidInput(
            "judge nli: statement and evidence must be text, got "
            f"{type(statement).__name__} and {type(evidence).__name__}"
        )
    digest = hashlib.blake2b(statement.encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(evidence.encode())
    return digest.digest()


def _check_options(
    dtype: str,
    batch_size: int,
    max_length: int | None,
    threshold: float | None,
    input_format: str,
) -> None:
    if dtype not in _DTYPES:
        raise ConfigError(f"judge nli: dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    if batch_size < 1:
        raise ConfigError(f"judge nli: batch_size must be at least 1, got {batch_size}")
    if max_length is not None and max_length < 8:
        raise ConfigError(f"judge nli: max_length must be at least 8 tokens, got {max_length}")
    if threshold is not None and not 0.0 < threshold < 1.0:
        raise ConfigError(f"judge nli: threshold must be in (0, 1), got {threshold}")
    if input_format not in _INPUT_FORMATS:
        raise ConfigError(
            f"judge nli: input_format must be one of {', '.join(_INPUT_FORMATS)}, "
            f"got {input_format!r}"
        )


def _require_runtime() -> None:
    for package in ("torch", "transformers"):
        if importlib.util.find_spec(package) is None:
            raise MissingDependency(package, "The NLI judge", extra="nli")


def _model_location(model: str) -> str:
    """The folder the weights are read from: ``model`` itself, or its snapshot in the local
    Hugging Face cache; a :class:`ConfigError` that says what to do when neither exists."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ConfigError(
                f"judge nli: {model!r} has no config.json: give the folder that holds the "
                "model's config.json, tokenizer and weights"
            )
        return str(folder)
    cached = _cached_snapshot(model)
    if cached is not None:
        return cached
    raise ConfigError(
        f"judge nli: no model at {model!r}: it is neither a folder on this machine nor a "
        "model in the local Hugging Face cache. citelab never downloads weights "
        "(local_files_only=True): download them yourself, e.g. `hf download "
        "google/t5_xxl_true_nli_mixture --local-dir t5_true`, and give that folder"
    )


def _cached_snapshot(model: str) -> str | None:
    if model.count("/") != 1 or model.startswith((".", "/", "~")):
        return None
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(model, "config.json")
    return str(Path(found).parent) if isinstance(found, str) else None


class _Runtime:
    """A loaded model and tokenizer, and how the judge reads its output."""

    def __init__(self, judge: NLIJudge, torch: Any, tokenizer: Any, model: Any) -> None:
        self.torch = torch
        self.tokenizer = tokenizer
        self.model = model
        self.threshold = judge.threshold
        self.seq2seq = bool(model.config.is_encoder_decoder)
        self.input_format = _input_format(judge.input_format, self.seq2seq)
        self.max_length = _max_length(judge.max_length, self.seq2seq, tokenizer, model.config)
        if self.seq2seq:
            self.label_text = _TRUE_SUPPORTED if judge.label is None else str(judge.label)
            self.label_id = _first_token(tokenizer, self.label_text)
        else:
            self.label_id = _class_index(model.config.id2label, judge.label, judge.model)

    def run(self, pairs: Sequence[tuple[str, str]]) -> list[_Verdict]:
        with self.torch.inference_mode():
            if not self.seq2seq:
                return self._classify(pairs)
            if self.threshold is None:
                return self._generate(pairs)
            return self._first_step(pairs)

    def _generate(self, pairs: Sequence[tuple[str, str]]) -> list[_Verdict]:
        """ALCE's rule: greedy generation, decoded without special tokens, equal to "1"."""
        inputs = self._encode([self._text(statement, evidence) for statement, evidence in pairs])
        out = self.model.generate(
            **inputs,
            max_new_tokens=_TRUE_MAX_NEW_TOKENS,
            do_sample=False,
            num_beams=1,
            output_logits=True,
            return_dict_in_generate=True,
        )
        texts = self.tokenizer.batch_decode(out.sequences, skip_special_tokens=True)
        scores = out.logits[0].float().softmax(dim=-1)[:, self.label_id].tolist()
        return [
            _Verdict(text == self.label_text, score)
            for text, score in zip(texts, scores, strict=True)
        ]

    def _first_step(self, pairs: Sequence[tuple[str, str]]) -> list[_Verdict]:
        inputs = self._encode([self._text(statement, evidence) for statement, evidence in pairs])
        start = self.model.config.decoder_start_token_id
        first = self.torch.full((len(pairs), 1), start, dtype=self.torch.long, device=self.device)
        logits = self.model(**inputs, decoder_input_ids=first).logits[:, 0, :]
        return self._thresholded(logits.float().softmax(dim=-1)[:, self.label_id].tolist())

    def _classify(self, pairs: Sequence[tuple[str, str]]) -> list[_Verdict]:
        if self.input_format == "pair":
            inputs = self._encode(
                [evidence for _, evidence in pairs], [statement for statement, _ in pairs]
            )
        else:
            inputs = self._encode([self._text(s, e) for s, e in pairs])
        logits = self.model(**inputs).logits.float()
        scores = logits.softmax(dim=-1)[:, self.label_id].tolist()
        if self.threshold is not None:
            return self._thresholded(scores)
        winners = logits.argmax(dim=-1).tolist()
        return [
            _Verdict(winner == self.label_id, score)
            for winner, score in zip(winners, scores, strict=True)
        ]

    def _thresholded(self, scores: list[float]) -> list[_Verdict]:
        threshold = self.threshold if self.threshold is not None else 0.5
        return [_Verdict(score >= threshold, score) for score in scores]

    @property
    def device(self) -> Any:
        return self.model.device

    def _encode(self, texts: list[str], pairs: list[str] | None = None) -> Any:
        cut = self.max_length is not None
        encoded = self.tokenizer(
            texts,
            pairs,
            padding=True,
            truncation=cut,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return {name: tensor.to(self.device) for name, tensor in encoded.items()}

    def _text(self, statement: str, evidence: str) -> str:
        """One input text (TRUE's or MiniCheck's), the evidence cut at its end when the whole
        would exceed ``max_length`` (a cut at the text's end would lose the statement)."""
        compose = _COMPOSERS[self.input_format]
        text = compose(self.tokenizer, statement, evidence)
        if self.max_length is None:
            return text
        while evidence:
            excess = len(self.tokenizer(text).input_ids) - self.max_length
            if excess <= 0:
                break
            ids = self.tokenizer(evidence, add_special_tokens=False).input_ids
            evidence = self.tokenizer.decode(ids[: max(0, len(ids) - excess)])
            text = compose(self.tokenizer, statement, evidence)
        return text


def _true_text(tokenizer: Any, statement: str, evidence: str) -> str:
    return TRUE_INPUT.format(evidence=evidence, statement=statement)


def _minicheck_text(tokenizer: Any, statement: str, evidence: str) -> str:
    return f"{evidence}{tokenizer.eos_token}{statement}"


_COMPOSERS: dict[str, Callable[[Any, str, str], str]] = {
    "true": _true_text,
    "minicheck": _minicheck_text,
}


def _input_format(asked: str, seq2seq: bool) -> str:
    if asked == "auto":
        return "true" if seq2seq else "pair"
    if seq2seq != (asked == "true"):
        kind = "a seq2seq" if seq2seq else "a classification"
        fits = "true" if seq2seq else "pair or minicheck"
        raise ConfigError(f"judge nli: input_format {asked!r} does not fit {kind} model ({fits})")
    return asked


def _max_length(asked: int | None, seq2seq: bool, tokenizer: Any, config: Any) -> int | None:
    if asked is not None or seq2seq:
        return asked
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and limit < _NO_LIMIT:
        return limit
    positions = getattr(config, "max_position_embeddings", None)
    return positions if isinstance(positions, int) else 512


def _first_token(tokenizer: Any, text: str) -> int:
    ids: list[int] = tokenizer(text, add_special_tokens=False).input_ids
    if not ids:
        raise ConfigError(f"judge nli: the label {text!r} is no token of the model's vocabulary")
    return ids[0]


def _class_index(id2label: dict[int, str], label: str | int | None, model: str) -> int:
    """The index of the class that means "supported" (see the module docs)."""
    names = {int(index): str(name) for index, name in id2label.items()}
    shown = ", ".join(f"{index}: {name}" for index, name in sorted(names.items()))
    if isinstance(label, int):
        if label not in names:
            raise ConfigError(f"judge nli: label {label} is not a class of {model} ({shown})")
        return label
    wanted = (label.casefold(),) if label is not None else _SUPPORT_LABELS
    for candidate in wanted:
        for index, name in sorted(names.items()):
            if name.casefold() == candidate:
                return index
    raise ConfigError(
        f"judge nli: which class of {model} means 'supported'? Its labels are {shown}; give "
        'it as label (a name or an index), e.g. MiniCheck\'s models: "label": 1'
    )


def _load(judge: NLIJudge) -> _Runtime:
    """The model and tokenizer of ``judge``, from local files only, in eval mode."""
    import torch
    import transformers

    path = judge._path
    try:
        config = transformers.AutoConfig.from_pretrained(path, local_files_only=True)
        kind = (
            transformers.AutoModelForSeq2SeqLM
            if config.is_encoder_decoder
            else transformers.AutoModelForSequenceClassification
        )
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = kind.from_pretrained(path, local_files_only=True, dtype=getattr(torch, judge.dtype))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"judge nli: cannot load the model at {path!r}: {exc}") from exc
    try:
        model.to(torch.device(judge.device))
    except (RuntimeError, AssertionError) as exc:
        raise ConfigError(f"judge nli: device {judge.device!r} is not usable: {exc}") from exc
    model.eval()
    return _Runtime(judge, torch, tokenizer, model)


register_judge("nli", NLIJudge)
