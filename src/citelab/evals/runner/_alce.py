"""ALCE's generation step with any citelab model: ALCE's prompts (see
:func:`citelab.evals.dataset.alce_prompts`), ALCE's decoding settings, ALCE-format result
files that ALCE's ``eval.py`` and ``citelab score --format alce`` read.

:func:`run_alce` sends every item's prompt to a model built by spec (``openai:<model>``,
``anthropic:<model>``, ``extractive``…): chat models get ALCE's system message before the
prompt, as ``run.py`` does for its chat models; ``chat=False`` sends the prompt alone and
stops at the first newline, as ``run.py`` does for completion models (an
``openai-completions:<model>`` spec, OpenAI's ``/v1/completions``, sends it as raw text and
needs ``chat=False``). Temperature, top-p and
the most new tokens go to the adapters that take them (OpenAI-compatible and Anthropic); a
newline stop is also applied to the text received, so models that ignore stops (the offline
ones) end where ALCE's would. Nothing watches the tokens, so the SDK adapters are asked for
whole answers unless their ``stream`` option says otherwise. Calls go through the runner's
disk cache of model calls (:class:`~citelab.evals.runner.CachedModel`), at most
``concurrency`` at once, with a progress bar; every finished item is appended to
``<result>.partial.jsonl`` at once, so an interrupted run resumes without asking again for
what it had. The result file is ``run.py``'s:
``{"args": {...}, "data": [item + "prompt" + "output"]}``, named as ``run.py`` names it.

``run.py`` also caps the new tokens by the model's context length minus the prompt's tokens
(counted with GPT-2's tokenizer); citelab sends ``max_new_tokens`` as it is.

In a suite, every ``[[alce]]`` entry × model is an :class:`AlceSuiteRun`'s result: its items
are :class:`AlcePromptJob` values (plain data) that the run's executor answers beside the
pipeline's units, wherever it answers those (a Ray worker answers a job as this process
would); the driver keeps each answer in the partial file and writes the same result file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from citelab._async import run_blocking
from citelab._errors import ConfigError
from citelab._jsonl import json_lines
from citelab.evals.dataset import (
    AlceItem,
    AlcePromptSettings,
    Case,
    Dataset,
    GoldTurn,
    alce_chat_messages,
    alce_clean_output,
    alce_document_uri,
    alce_documents,
    alce_prompts,
    load_alce_eval,
    load_alce_prompt_file,
)
from citelab.evals.records import CaseRecord, SourceRecord, TurnRecord
from citelab.evals.runner._cache import CachedModel
from citelab.evals.runner._suite import AlceEntry, ModelSpec, Suite
from citelab.models import Message, Model, TextDelta, get_model

__all__ = [
    "ALCE_VARIANT",
    "AlceDecoding",
    "AlcePromptJob",
    "AlceSuiteRun",
    "alce_answer",
    "alce_dataset",
    "alce_job_model",
    "alce_recorded_records",
    "alce_result_name",
    "answer_alce_job",
    "run_alce",
    "run_alce_async",
]

_NEWLINE_STOPS = ["\n", "\n\n"]
_COMPLETIONS = "openai-completions:"


class AlceDecoding(BaseModel):
    """``run.py``'s decoding options (its defaults) and whether the model is a chat model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.5, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_new_tokens: int = Field(default=300, ge=1)
    chat: bool = True
    """ALCE's system message before the prompt (its chat models); False: the prompt alone,
    stopped at the first newline (its completion and local models)."""


def alce_result_name(dataset: str, model: str, tag: str, settings: AlcePromptSettings) -> str:
    """The file name ``run.py`` gives a result (without ``.json``)."""
    short = model.split(":", 1)[-1].rsplit("/", maxsplit=1)[-1]
    name = f"{dataset}-{short}-{tag}-shot{settings.shot}-ndoc{settings.ndoc}-{settings.seed}"
    if settings.quick_test is not None:
        name += f"-quick_test{settings.quick_test}"
    if settings.no_doc_in_demo:
        name += "-no_doc_in_demo"
    elif settings.ndoc_in_demo is not None:
        name += f"-{settings.ndoc_in_demo}_doc_in_demo"
    return name


def run_alce(
    prompt_file: str | Path,
    eval_file: str | Path,
    model: str,
    settings: AlcePromptSettings,
    decoding: AlceDecoding | None = None,
    **options: Any,
) -> Path:
    """Generate ALCE's answers with ``model`` and write the result file; its path.

    Options (keywords, as :func:`run_alce_async` takes them): ``model_options`` (the model
    factory's keywords), ``out_dir`` (default ``result``), ``dataset_name`` (default: the
    eval file's name up to its first ``_``), ``tag`` (default ``citelab``), ``cache_dir``
    (default ``<out_dir>/.cache``), ``cache``, ``concurrency`` (default 8), ``progress``.
    """
    return run_blocking(
        run_alce_async(prompt_file, eval_file, model, settings, decoding, **options)
    )


async def run_alce_async(
    prompt_file: str | Path,
    eval_file: str | Path,
    model: str,
    settings: AlcePromptSettings,
    decoding: AlceDecoding | None = None,
    *,
    model_options: dict[str, Any] | None = None,
    out_dir: str | Path = "result",
    dataset_name: str | None = None,
    tag: str = "citelab",
    cache_dir: str | Path | None = None,
    cache: bool = True,
    concurrency: int = 8,
    progress: bool = True,
) -> Path:
    """The coroutine behind :func:`run_alce` (same arguments)."""
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    decoding = decoding or AlceDecoding()
    if model.startswith(_COMPLETIONS) and decoding.chat:
        raise ConfigError(
            f"model {model!r} is a completions (non-chat) model: ALCE sends such models the "
            "prompt alone (chat=False; citelab alce run --completion)"
        )
    built = alce_prompts(load_alce_prompt_file(prompt_file), load_alce_eval(eval_file), settings)
    dataset = dataset_name or Path(eval_file).name.split("_")[0].removesuffix(".json")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{alce_result_name(dataset, model, tag, settings)}.json"
    spec_options = _decoding_options(model, decoding, model_options or {})
    namespace = _namespace(model, spec_options)
    cached = CachedModel(
        get_model(model, **spec_options),
        Path(cache_dir) if cache_dir is not None else out / ".cache",
        namespace,
        enabled=cache,
    )
    generator = _Generator(cached, decoding, target.with_suffix(".partial.jsonl"), namespace)
    try:
        await cached.check_available()  # a wrong URL or model name fails now, not per item
        outputs = await generator.generate(built, concurrency, progress)
    finally:
        await cached.aclose()
    args = _args(
        prompt_file=prompt_file,
        eval_file=eval_file,
        model=model,
        settings=settings,
        decoding=decoding,
        dataset=dataset,
        tag=tag,
    )
    data = [_result_item(item, prompt, outputs[index]) for index, item, prompt in built]
    _write_json(target, {"args": args, "data": data})
    generator.partial.unlink(missing_ok=True)
    return target


class _Generator:
    """Asks the model for each prompt not yet in the partial file, appending each answer."""

    def __init__(self, model: Model, decoding: AlceDecoding, partial: Path, namespace: str):
        self.model = model
        self.decoding = decoding
        self.partial = partial
        self.namespace = namespace

    async def generate(
        self, built: Sequence[tuple[int, AlceItem, str]], concurrency: int, progress: bool
    ) -> dict[int, str]:
        done = self._finished()
        outputs: dict[int, str] = {}
        todo = []
        for index, _, prompt in built:
            key = self._key(prompt)
            if key in done:
                outputs[index] = done[key]
            else:
                todo.append((index, prompt, key))
        bar = _progress(len(built), len(outputs), progress)
        gate = asyncio.Semaphore(concurrency)

        async def one(index: int, prompt: str, key: str) -> None:
            async with gate:
                outputs[index] = await self._answer(prompt)
            self._append(key, outputs[index])
            if bar is not None:
                bar.update(1)

        try:
            await asyncio.gather(*(one(*entry) for entry in todo))
        finally:
            if bar is not None:
                bar.close()
        return outputs

    async def _answer(self, prompt: str) -> str:
        return await alce_answer(self.model, self.decoding, prompt)

    def _key(self, prompt: str) -> str:
        return _partial_key(self.namespace, self.decoding, prompt)

    def _finished(self) -> dict[str, str]:
        return _finished(self.partial)

    def _append(self, key: str, output: str) -> None:
        _append(self.partial, key, output)


async def alce_answer(model: Model, decoding: AlceDecoding, prompt: str) -> str:
    """``model``'s answer to one ALCE prompt, asked and cleaned as ``run.py`` does."""
    if decoding.chat:
        messages = cast(list[Message], alce_chat_messages(prompt))
    else:
        messages = [{"role": "user", "content": prompt}]
    pieces = [delta.text async for delta in model.stream(messages) if isinstance(delta, TextDelta)]
    text = "".join(pieces)
    if not decoding.chat:
        text = text.split("\n", 1)[0]
    return alce_clean_output(text)


def _partial_key(namespace: str, decoding: AlceDecoding, prompt: str) -> str:
    payload = json.dumps([namespace, decoding.model_dump(), prompt])
    return hashlib.sha256(payload.encode()).hexdigest()


def _finished(partial: Path) -> dict[str, str]:
    """Partial key → output of the answers a partial file holds."""
    done: dict[str, str] = {}
    try:
        lines = partial.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return done
    # A line cut short by an interruption is not JSON (or lacks a field): asked again.
    for _, entry in json_lines(lines)[0]:
        if isinstance(entry, dict) and "key" in entry and "output" in entry:
            done[str(entry["key"])] = str(entry["output"])
    return done


def _append(partial: Path, key: str, output: str) -> None:
    with partial.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"key": key, "output": output}, ensure_ascii=False) + "\n")


def _namespace(model: str, spec_options: dict[str, Any]) -> str:
    """The model-call cache's namespace of ALCE's calls to ``model``."""
    return json.dumps({"spec": model, "options": spec_options}, sort_keys=True, default=str)


def _decoding_options(model: str, decoding: AlceDecoding, given: dict[str, Any]) -> dict[str, Any]:
    """The model factory's keywords with ALCE's decoding, for the adapters that take it."""
    options = dict(given)
    extra: dict[str, Any] = dict(options.pop("options", None) or {})
    if model.startswith(("openai:", _COMPLETIONS)):
        extra.setdefault("top_p", decoding.top_p)
        extra.setdefault("max_tokens", decoding.max_new_tokens)
        if not decoding.chat:
            extra.setdefault("stop", _NEWLINE_STOPS)
    elif model.startswith("anthropic:"):
        extra.setdefault("top_p", decoding.top_p)
        options.setdefault("max_tokens", decoding.max_new_tokens)
    else:
        return options
    options.setdefault("temperature", decoding.temperature)
    options.setdefault("stream", False)  # nothing watches the tokens: whole answers cost less
    options["options"] = extra
    return options


def _args(
    *,
    prompt_file: str | Path,
    eval_file: str | Path,
    model: str,
    settings: AlcePromptSettings,
    decoding: AlceDecoding,
    dataset: str,
    tag: str,
) -> dict[str, Any]:
    """The run's options under ``run.py``'s names (its ``args``), and citelab's own."""
    return {
        "prompt_file": str(prompt_file),
        "eval_file": str(eval_file),
        "quick_test": settings.quick_test,
        "ndoc": settings.ndoc,
        "shot": settings.shot,
        "seed": settings.seed,
        "no_doc_in_demo": settings.no_doc_in_demo,
        "fewer_doc_in_demo": settings.ndoc_in_demo is not None,
        "ndoc_in_demo": settings.ndoc_in_demo,
        "dataset_name": dataset,
        "tag": tag,
        "model": model,
        "temperature": decoding.temperature,
        "top_p": decoding.top_p,
        "max_new_tokens": decoding.max_new_tokens,
        "num_samples": 1,
        "use_shorter": settings.use_shorter,
        "chat": decoding.chat,
        "generated_by": "citelab",
    }


def _result_item(item: AlceItem, prompt: str, output: str) -> dict[str, Any]:
    return {**item.model_dump(mode="json"), "prompt": prompt, "output": output}


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def _progress(total: int, done: int, show: bool) -> Any:
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=done, desc="ALCE", unit="question", leave=False)


# --- in a suite ------------------------------------------------------------------------------

ALCE_VARIANT = "alce_prompt"
"""The variant name of answers made with ALCE's prompt in a suite."""


def alce_dataset(suite: Suite, entry: AlceEntry) -> Dataset:
    """An ALCE entry's items (those its settings draw) as cases: one turn, the question,
    answered by the entry's agent from the item's shown documents (the case's own corpus).
    A ``pipeline`` entry with an item that shows no document is a :class:`ConfigError`."""
    prompt_file, eval_file = suite.alce_paths(entry)
    built = alce_prompts(
        load_alce_prompt_file(prompt_file), load_alce_eval(eval_file), entry.settings()
    )
    cases = []
    for index, item, _ in built:
        if entry.pipeline and not item.docs:
            place = f"{suite.path}: key alce.{suite.alce.index(entry)}" if suite.path else ""
            raise ConfigError(
                f"{place}{': ' if place else ''}[[alce]] {entry.name!r}: item {index} of "
                f"{eval_file} has no docs to search (ndoc = {entry.ndoc}): citelab's "
                "pipeline (pipeline = true) answers an ALCE item from its own documents only"
            )
        cases.append(
            Case(
                id=f"q{index}",
                agent=entry.agent,
                turns=[GoldTurn(question=item.question)],
                tags=["alce"],
                documents=alce_documents(entry.name, index, item.docs),
            )
        )
    return Dataset(entry.name, cases, eval_file)


@dataclass(frozen=True)
class AlcePromptJob:
    """One ALCE item to answer with ALCE's prompt by one model of a suite: plain data (it
    pickles), so an executor's worker answers it (:func:`answer_alce_job`) as this process
    would."""

    key: str
    """The record key of the answer (variant :data:`ALCE_VARIANT`)."""
    partial_key: str
    """Its key in the result's partial file."""
    entry: str
    """The ``[[alce]]`` entry's name (the record's dataset)."""
    model: ModelSpec
    decoding: AlceDecoding
    options: dict[str, Any]
    """The model factory's keywords, ALCE's decoding among them."""
    namespace: str
    """The model-call cache's namespace of these calls."""
    index: int
    """The item's position in the eval file."""
    item: dict[str, Any]
    """The item as the result file holds it, without ``output``."""

    @property
    def label(self) -> str:
        """The model's name in a run's model-call counts."""
        return f"{self.model.name} ({ALCE_VARIANT})"

    def record(self, output: str) -> CaseRecord:
        """The answer ``output`` as the run records it (and reads it back from the file)."""
        return _record(
            self.key, self.item, output, entry=self.entry, model=self.model.name, index=self.index
        )


async def answer_alce_job(job: AlcePromptJob, model: Model) -> CaseRecord:
    """Answer ``job`` with ``model`` (its cached model, built from ``job``'s spec, options
    and namespace) into its record."""
    return job.record(await alce_answer(model, job.decoding, str(job.item["prompt"])))


def alce_job_model(job: AlcePromptJob, cache_dir: Path, *, cache: bool) -> CachedModel:
    """The model ``job`` is answered by, behind the run's model-call cache."""
    built = get_model(job.model.spec, **job.options)
    return CachedModel(built, cache_dir, job.namespace, enabled=cache)


@dataclass
class _AlceResult:
    """One ``[[alce]]`` entry answered by one model: its result file and jobs."""

    entry: AlceEntry
    spec: ModelSpec
    path: Path
    args: dict[str, Any]
    jobs: list[AlcePromptJob]
    outputs: dict[int, str] = field(default_factory=dict)
    """Eval-file position → output, for the items answered so far."""

    @property
    def partial(self) -> Path:
        return self.path.with_suffix(".partial.jsonl")


class AlceSuiteRun:
    """ALCE's prompt over every ``[[alce]]`` entry × model of a suite, as one run answers it:
    the jobs still to answer (the answers of an interrupted run are read back from the
    result files' partial files), each answer kept as it comes (:meth:`keep`), and the
    result files under ``out/alce/`` written at the end (:meth:`finish`). The jobs go to the
    run's executor beside the pipeline's units, so they run where those run."""

    def __init__(self, suite: Suite, models: Sequence[ModelSpec], out: Path) -> None:
        self.suite = suite
        self.out = out
        self.results = [self._result(entry, spec) for entry in suite.alce for spec in models]
        self._by_key = {job.key: (result, job) for result in self.results for job in result.jobs}

    def pending(self) -> list[AlcePromptJob]:
        """The jobs no partial file answers yet, in order."""
        return [
            job for result in self.results for job in result.jobs if job.index not in result.outputs
        ]

    def keep(self, record: CaseRecord) -> bool:
        """Keep ``record`` if it answers one of the jobs (appended to its partial file at
        once); False for any other record."""
        found = self._by_key.get(record.key)
        if found is None:
            return False
        result, job = found
        output = record.turns[0].text
        result.outputs[job.index] = output
        _append(result.partial, job.partial_key, output)
        return True

    def finish(self) -> list[CaseRecord]:
        """Write every result file (all its jobs answered) and read back its records, as
        :func:`alce_recorded_records` does."""
        records = []
        for result in self.results:
            data = [{**job.item, "output": result.outputs[job.index]} for job in result.jobs]
            _write_json(result.path, {"args": result.args, "data": data})
            result.partial.unlink(missing_ok=True)
            indices = [job.index for job in result.jobs]
            records += _records(result.path, indices, result.entry, result.spec)
        return records

    def _result(self, entry: AlceEntry, spec: ModelSpec) -> _AlceResult:
        prompt_file, eval_file = self.suite.alce_paths(entry)
        decoding = _entry_decoding(entry)
        if spec.spec.startswith(_COMPLETIONS) and decoding.chat:
            raise ConfigError(
                f"{self.suite.path}: key alce.{self.suite.alce.index(entry)}: model "
                f"{spec.spec!r} is a completions (non-chat) model: ALCE sends such models the "
                "prompt alone (chat = false)"
            )
        settings = entry.settings()
        prompts = load_alce_prompt_file(prompt_file)
        built = alce_prompts(prompts, load_alce_eval(eval_file), settings)
        options = _decoding_options(spec.spec, decoding, dict(spec.options))
        namespace = _namespace(spec.spec, options)
        name = alce_result_name(entry.name, spec.spec, _tag(spec), settings)
        path = self.out / "alce" / f"{name}.json"
        args = _args(
            prompt_file=prompt_file,
            eval_file=eval_file,
            model=spec.spec,
            settings=settings,
            decoding=decoding,
            dataset=entry.name,
            tag=_tag(spec),
        )
        digest = _record_digest(entry, spec, decoding)
        jobs = [
            AlcePromptJob(
                key=_record_key(spec, entry, index, digest),
                partial_key=_partial_key(namespace, decoding, prompt),
                entry=entry.name,
                model=spec,
                decoding=decoding,
                options=options,
                namespace=namespace,
                index=index,
                item={**item.model_dump(mode="json"), "prompt": prompt},
            )
            for index, item, prompt in built
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        result = _AlceResult(entry, spec, path, args, jobs)
        done = _finished(result.partial)
        result.outputs = {j.index: done[j.partial_key] for j in jobs if j.partial_key in done}
        return result


def alce_recorded_records(suite: Suite, models: Sequence[ModelSpec], out: Path) -> list[CaseRecord]:
    """The records of an :class:`AlceSuiteRun` read back from the result files a run wrote
    under ``out/alce/`` (no model is asked; a missing file is a :class:`ConfigError`)."""
    records = []
    for entry in suite.alce:
        for spec in models:
            name = alce_result_name(entry.name, spec.spec, _tag(spec), entry.settings())
            path = out / "alce" / f"{name}.json"
            if not path.is_file():
                raise ConfigError(
                    f"{path}: no ALCE result file for [[alce]] {entry.name!r} and model "
                    f"{spec.name!r} (run the suite first)"
                )
            records += _records(path, _drawn_indices(suite, entry), entry, spec)
    return records


def _entry_decoding(entry: AlceEntry) -> AlceDecoding:
    return AlceDecoding(
        temperature=entry.temperature,
        top_p=entry.top_p,
        max_new_tokens=entry.max_new_tokens,
        chat=entry.chat,
    )


def _tag(spec: ModelSpec) -> str:
    return spec.name.replace(":", "_").replace("/", "_")


def _drawn_indices(suite: Suite, entry: AlceEntry) -> list[int]:
    """The eval-file positions of the entry's items, in its result file's order."""
    return [int(case.id.removeprefix("q")) for case in alce_dataset(suite, entry)]


def _record_digest(entry: AlceEntry, spec: ModelSpec, decoding: AlceDecoding) -> str:
    fingerprint = json.dumps(
        [entry.model_dump(mode="json"), spec.model_dump(mode="json"), decoding.model_dump()],
        sort_keys=True,
    )
    return hashlib.sha256(fingerprint.encode()).hexdigest()[:16]


def _record_key(spec: ModelSpec, entry: AlceEntry, index: int, digest: str) -> str:
    return "|".join((ALCE_VARIANT, spec.name, entry.name, f"q{index}", digest))


def _records(path: Path, indices: list[int], entry: AlceEntry, spec: ModelSpec) -> list[CaseRecord]:
    """The records of a result file (its items at the eval-file positions ``indices``)."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    digest = _record_digest(entry, spec, _entry_decoding(entry))
    return [
        _record(
            _record_key(spec, entry, index, digest),
            item,
            str(item["output"]),
            entry=entry.name,
            model=spec.name,
            index=index,
        )
        for index, item in zip(indices, data, strict=True)
    ]


def _record(
    key: str, item: dict[str, Any], output: str, *, entry: str, model: str, index: int
) -> CaseRecord:
    sources = [
        SourceRecord(
            number=n,
            uri=alce_document_uri(entry, index, n),
            title=str(doc.get("title", "")),
            content=str(doc.get("sent") or doc.get("text") or ""),
        )
        for n, doc in enumerate(item.get("docs", []), start=1)
    ]
    turn = TurnRecord(
        question=str(item["question"]), text=output, raw_text=output, sources=sources,
        candidates=sources, seen=sources,
    )  # fmt: skip
    return CaseRecord(
        key=key,
        variant=ALCE_VARIANT,
        model=model,
        dataset=entry,
        case_id=f"q{index}",
        tags=["alce"],
        turns=[turn],
    )
