"""Answering a plan's units: :class:`BatchRunner` answers each case through the answer
service and records every turn (:func:`turn_record`). It is the runner's
:class:`~citelab.evals.execution.Answering`: every executor (this process, a Ray worker)
answers cases with one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citelab._errors import CitelabError
from citelab.agent import AgentConfig, resolve_corpus_path
from citelab.answers import Answer, AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.corpus import Corpus, Document, Reader, load_corpus
from citelab.evals.dataset import Case
from citelab.evals.records import (
    CaseRecord,
    RestrictedEntity,
    RoundRecord,
    SourceRecord,
    TurnRecord,
)
from citelab.evals.runner._alce import AlcePromptJob, alce_job_model, answer_alce_job
from citelab.evals.runner._cache import CachedModel
from citelab.evals.runner._plan import RunPlan, Unit, model_endpoint
from citelab.evals.runner._suite import ModelSpec, Variant
from citelab.models import (
    Model,
    OpenAIModel,
    PerturbedModel,
    current_view,
    get_model,
    recording_perturbations,
)
from citelab.retrieval import SearchIndex

__all__ = ["BatchRunner", "documents_digest", "turn_record"]


class BatchRunner:
    """Answers units of a plan, one at a time, named by their index in ``plan.units``: the
    runner's :class:`~citelab.evals.execution.Answering`.

    Its set-up loads the corpora and opens one answer service per (variant, model) with its
    model behind the disk cache in ``cache_dir``; a case with its own documents
    (:attr:`~citelab.evals.dataset.Case.documents`, an ALCE item's) is answered by a service
    of its own, built when it runs, whose index holds those documents alone: one index per
    distinct set of documents, built once in this process and kept for the run, so every
    variant and model answering the same item searches the same index (``share_indexes=False``
    builds one per unit instead, as before; kept to measure). The executor runs at most
    ``concurrency`` units at once. The ``alce`` jobs (ALCE's prompt, see
    :class:`~citelab.evals.runner._alce.AlceSuiteRun`) follow the units: index
    ``len(plan.units) + k`` is job ``k``. An executor with workers builds one in each worker
    from :meth:`portable` (records are plain data and pickle).
    """

    def __init__(
        self,
        plan: RunPlan,
        cache_dir: Path,
        *,
        concurrency: int,
        cache: bool = True,
        stream_calls: bool = False,
        alce: Sequence[AlcePromptJob] = (),
        share_indexes: bool = True,
    ) -> None:
        self.plan = plan
        self.share_indexes = share_indexes
        self.own_indexes: dict[str, asyncio.Future[SearchIndex]] = {}
        """``<corpus name>|<content digest>`` of a case's own documents → their index (being)
        built, kept for the run."""
        self.alce = list(alce)
        self.alce_models: dict[str, CachedModel] = {}
        """Cache namespace → the model that answers ALCE's prompts so."""
        self.cache_dir = cache_dir
        self.cache = cache
        self.concurrency = concurrency
        self.corpora: dict[str, Corpus] = {}
        self.models: dict[str, CachedModel] = {}
        """Model name → its calls' cache (under a perturbing model: its inner model's)."""
        self.answering: dict[str, Model] = {}
        """Model name → what the services call: the cache, or a perturbing model over it."""
        self.services: dict[tuple[str, str], AnswerService] = {}
        self.stream_calls = stream_calls
        """Stream the calls of models that can also answer whole (see :func:`run`)."""
        self.streaming: dict[str, bool] = {}
        """Model name → whether its calls stream, for the models that have the choice."""
        self._readable: dict[tuple[str, Reader], str] = {}

    async def check_models(self, units: Sequence[Unit]) -> None:
        """Preflight: every model the units use that can tell says it answers (else a
        :class:`~citelab.ModelError` naming the model, the endpoint and the cause)."""
        seen: dict[str, ModelSpec] = {unit.model.name: unit.model for unit in units}
        for spec in seen.values():
            self._model(spec)
            await self.models[spec.name].check_available()
        for job in {job.namespace: job for job in self.alce}.values():
            await self._alce_model(job).check_available()

    # -- the Answering protocol ---------------------------------------------------------------

    def key(self, index: int) -> str:
        job = self._alce_job(index)
        return job.key if job is not None else self.plan.units[index].key

    async def set_up(self, indices: Sequence[int]) -> None:
        """Load the corpora and open every service the units at ``indices`` use, with their
        agents' indexes and models."""
        self._load_corpora()
        units = [self.plan.units[i] for i in indices if i < len(self.plan.units)]
        for variant, spec, agents in _services_used(units):
            await self._service(variant, spec).prepare(agents)

    async def answer(self, index: int) -> CaseRecord:
        """Answer the unit at ``index`` (all its turns, one conversation) into its record."""
        job = self._alce_job(index)
        if job is not None:
            return await answer_alce_job(job, self._alce_model(job))
        return await self._run_unit(self.plan.units[index])

    def model_calls(self) -> dict[str, dict[str, int]]:
        calls = {
            name: {"hits": model.hits, "misses": model.misses}
            for name, model in self.models.items()
        }
        labels = {job.namespace: job.label for job in self.alce}
        for namespace, model in self.alce_models.items():
            entry = calls.setdefault(labels[namespace], {"hits": 0, "misses": 0})
            entry["hits"] += model.hits
            entry["misses"] += model.misses
        return calls

    async def aclose(self) -> None:
        for model in [*self.models.values(), *self.alce_models.values()]:
            await model.aclose()

    def portable(self) -> Callable[[], BatchRunner]:
        # Scorers may hold clients (an LLM judge's); the executors rebuild them apart.
        plan = dataclasses.replace(self.plan, scorers=[])
        return _Recipe(
            plan,
            self.cache_dir.resolve(),
            self.concurrency,
            self.cache,
            self.stream_calls,
            tuple(self.alce),
        )

    def _alce_job(self, index: int) -> AlcePromptJob | None:
        position = index - len(self.plan.units)
        return self.alce[position] if position >= 0 else None

    def _alce_model(self, job: AlcePromptJob) -> CachedModel:
        if job.namespace not in self.alce_models:
            model = alce_job_model(job, self.cache_dir, cache=self.cache)
            self.alce_models[job.namespace] = model
        return self.alce_models[job.namespace]

    async def _run_unit(self, unit: Unit) -> CaseRecord:
        if not unit.case.documents:
            return await self._answer_unit(unit, self._service(unit.variant, unit.model))
        # A case with its own documents gets a service of its own: its agent's index holds
        # them alone (in memory; a few documents), so no other case's can be found.
        config = self.plan.agents[unit.variant.name][unit.case.agent]
        agents = {unit.case.agent: config}
        indexes: dict[str, SearchIndex] = {}
        own = unit.case.own_corpus()
        assert own is not None
        if self.share_indexes and config.retrieval is not None:
            index = await self._own_index(unit.case, own)
            own = index.corpus
            indexes[config.corpus] = index
        service = self._new_service(agents, unit.model, {config.corpus: own}, indexes)
        try:
            return await self._answer_unit(unit, service, own)
        finally:
            await service.aclose()

    async def _answer_unit(
        self, unit: Unit, service: AnswerService, own: Corpus | None = None
    ) -> CaseRecord:
        config = self.plan.agents[unit.variant.name][unit.case.agent]
        reader = unit.case.reader.to_reader()
        if own is None:
            corpus = self.corpora[config.corpus]
            readable = self._readable_for(config.corpus, reader)
        else:
            corpus, readable = own, _readable_text(own, reader)
        turns: list[TurnRecord] = []
        conversation: str | None = None
        for index, gold in enumerate(unit.case.turns):
            restricted = _restricted(corpus, reader, readable + "\n" + gold.question.casefold())
            if turns and turns[-1].error is not None:
                turns.append(
                    TurnRecord(
                        turn=index,
                        question=gold.question,
                        error="not run: an earlier turn of the case failed",
                    )
                )
                continue
            began = time.perf_counter()
            try:
                with recording_perturbations() as calls:
                    answer = await service.answer(
                        unit.case.agent,
                        gold.question,
                        conversation,
                        reader,
                        seed=self.plan.suite.seed,
                    )
            except CitelabError as exc:
                turns.append(
                    TurnRecord(
                        turn=index, question=gold.question, error=f"{type(exc).__name__}: {exc}"
                    )
                )
                continue
            conversation = answer.conversation_id
            turns.append(
                turn_record(
                    answer,
                    index,
                    gold.question,
                    restricted=restricted,
                    canaries=unit.case.canaries,
                    seconds=time.perf_counter() - began,
                    earlier=earlier_numbers(turns),
                ).model_copy(
                    update={
                        "perturbed": isinstance(self.answering[unit.model.name], PerturbedModel),
                        "injections": [
                            injection.model_dump(mode="json")
                            for call in calls
                            for injection in call.injections
                        ],
                    }
                )
            )
        return CaseRecord(
            key=unit.key,
            variant=unit.variant.name,
            model=unit.model.name,
            dataset=unit.dataset.name,
            case_id=unit.case.id,
            tags=list(unit.case.tags),
            turns=turns,
        )

    def _readable_for(self, corpus: str, reader: Reader) -> str:
        key = (corpus, reader)
        if key not in self._readable:
            self._readable[key] = _readable_text(self.corpora[corpus], reader)
        return self._readable[key]

    def _load_corpora(self) -> None:
        names = {c.corpus for agents in self.plan.agents.values() for c in agents.values()}
        for name in sorted(names - set(self.corpora)):
            self.corpora[name] = load_corpus(resolve_corpus_path(name))

    def _service(self, variant: Variant, spec: ModelSpec) -> AnswerService:
        key = (variant.name, spec.name)
        if key not in self.services:
            self.services[key] = self._new_service(
                self.plan.agents[variant.name], spec, self.corpora
            )
        return self.services[key]

    async def _own_index(self, case: Case, corpus: Corpus) -> SearchIndex:
        """The index of ``case``'s own documents (``corpus``, unless an earlier unit's is
        used): built once per distinct set of documents (in a worker thread, as a service
        builds its indexes), then shared."""
        key = f"{corpus.name}|{documents_digest(case.documents)}"
        if key not in self.own_indexes:
            built = asyncio.ensure_future(asyncio.to_thread(SearchIndex.build, corpus))
            self.own_indexes[key] = built
        return await self.own_indexes[key]

    def _new_service(
        self,
        agents: Mapping[str, AgentConfig],
        spec: ModelSpec,
        corpora: Mapping[str, Corpus],
        indexes: Mapping[str, SearchIndex] | None = None,
    ) -> AnswerService:
        """A service answering as ``agents`` with ``spec``'s model, from ``corpora`` (and
        ``indexes`` already built of some of them)."""
        label = f"eval-model-{spec.name}"
        return AnswerService(
            {name: config.model_copy(update={"model": label}) for name, config in agents.items()},
            store=MemoryConversationStore(),
            logs=MemoryLogStore(),
            models={label: self._model(spec)},
            corpora=corpora,
            indexes=indexes,
            # Nothing but model calls waits on this loop: a search in a worker thread
            # would only add two thread hops per call (the GIL serializes it anyway).
            tool_threads=False,
        )

    def _model(self, spec: ModelSpec) -> Model:
        if spec.name not in self.answering:
            built: Model = get_model(spec.spec, **spec.options)
            # A perturbing model draws its faults on every call, above the cache, so every
            # turn records its injections even when the inner model's answer is replayed.
            inner = built.inner if isinstance(built, PerturbedModel) else built
            if isinstance(inner, OpenAIModel):
                if "stream" not in spec.options:
                    inner.streaming = self.stream_calls
                self.streaming[spec.name] = inner.streaming
            identity: dict[str, Any] = spec.identity()
            endpoint = model_endpoint(spec)
            if endpoint is not None:  # answers of another endpoint are another model's
                identity["endpoint"] = endpoint
            namespace = json.dumps(identity, sort_keys=True)
            cached = CachedModel(inner, self.cache_dir, namespace, enabled=self.cache)
            self.models[spec.name] = cached
            if isinstance(built, PerturbedModel):
                built.inner = cached
            self.answering[spec.name] = built if isinstance(built, PerturbedModel) else cached
        return self.answering[spec.name]


def documents_digest(documents: Sequence[Document]) -> str:
    """A content hash of a case's own documents: the same documents, the same digest."""
    payload = json.dumps([doc.model_dump(mode="json") for doc in documents], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _services_used(units: Sequence[Unit]) -> list[tuple[Variant, ModelSpec, list[str]]]:
    """Each (variant, model) pair the units run from the agents' corpora, with the agents
    its cases ask, in order."""
    used: dict[tuple[str, str], tuple[Variant, ModelSpec, dict[str, None]]] = {}
    for unit in units:
        if unit.case.documents:
            continue  # answered from its own documents, by a service of its own
        key = (unit.variant.name, unit.model.name)
        entry = used.setdefault(key, (unit.variant, unit.model, {}))
        entry[2][unit.case.agent] = None
    return [(variant, spec, list(agents)) for variant, spec, agents in used.values()]


@dataclasses.dataclass(frozen=True)
class _Recipe:
    """What builds a :class:`BatchRunner` in another process (plain data: it pickles)."""

    plan: RunPlan
    cache_dir: Path
    concurrency: int
    cache: bool
    stream_calls: bool
    alce: tuple[AlcePromptJob, ...] = ()

    def __call__(self) -> BatchRunner:
        return BatchRunner(
            self.plan,
            self.cache_dir,
            concurrency=self.concurrency,
            cache=self.cache,
            stream_calls=self.stream_calls,
            alce=self.alce,
        )


def turn_record(
    answer: Answer,
    index: int,
    question: str,
    *,
    restricted: Sequence[RestrictedEntity] = (),
    canaries: Sequence[str] = (),
    seconds: float = 0.0,
    earlier: Mapping[int, str] | None = None,
) -> TurnRecord:
    """What the scorers need of an :class:`~citelab.answers.Answer`; ``earlier`` is what
    :func:`earlier_numbers` says of the conversation's earlier turns."""
    held_numbers = {new: old for old, new in answer.mapping.items()}
    final = [_source_record(s.number, s) for s in answer.sources]
    candidates = [
        _source_record(held_numbers.get(s.number or 0, s.number), s) for s in answer.sources
    ]
    candidates += [_source_record(s.number, s) for s in answer.dropped]
    return TurnRecord(
        turn=index,
        question=question,
        text=answer.text,
        raw_text=answer.raw_text,
        sources=final,
        candidates=sorted(candidates, key=lambda s: s.number),
        seen=_seen(answer),
        message=answer.message.to_wire(),
        no_answer=answer.no_answer,
        rounds=[_round_record(r) for r in answer.rounds],
        forced_searches=len(answer.forced),
        mapping=dict(answer.mapping),
        keep=answer.keep,
        earlier=dict(earlier or {}),
        dangling=len(answer.dangling),
        restricted=list(restricted),
        canaries=[c for c in canaries if c.casefold() not in question.casefold()],
        seconds=seconds,
    )


def earlier_numbers(turns: Sequence[TurnRecord]) -> dict[int, str]:
    """Number → URI as ``turns`` (a conversation's turns so far) used them in their final
    texts; the first use of a number wins."""
    earlier: dict[int, str] = {}
    for turn in turns:
        for source in turn.sources:
            earlier.setdefault(source.number, source.uri)
    return earlier


def _source_record(number: int | None, source: Any) -> SourceRecord:
    return SourceRecord(
        number=number or 0,
        uri=source.uri,
        title=source.title,
        content=source.content,
        langcode=source.langcode,
    )


def _round_record(record: Any) -> RoundRecord:
    added: dict[int, str] = {}
    for call in record.tool_calls:
        added.update(call.added)
    searches = sum(1 for call in record.tool_calls if call.error is None)
    return RoundRecord(
        index=record.index - 1,
        text=record.text,
        visible=dict(record.visible_numbering),
        searches=searches,
        added=added,
        input_tokens=record.usage.input_tokens if record.usage else None,
        output_tokens=record.usage.output_tokens if record.usage else None,
        tokens_estimated=bool(record.usage and record.usage.estimated),
    )


def _seen(answer: Answer) -> list[SourceRecord]:
    seen: dict[str, SourceRecord] = {}
    for record in answer.rounds:
        for number, source in current_view(record.messages).items():
            seen.setdefault(
                source.uri,
                SourceRecord(
                    number=number, uri=source.uri, title=source.title, content=source.content
                ),
            )
    return list(seen.values())


def _restricted(corpus: Corpus, reader: Reader, visible: str) -> list[RestrictedEntity]:
    """Entities ``reader`` may not read, with the titles whose sight would be a leak.

    ``visible`` is everything the reader may see anyway (readable documents, the question),
    case-folded: a title found there proves nothing, so it is not a leak marker.
    """
    return [
        RestrictedEntity(
            uri=doc.uri,
            titles=sorted(
                {t.title for t in doc.translations.values() if t.title.casefold() not in visible}
            ),
        )
        for doc in corpus
        if not doc.readable_by(reader)
    ]


def _readable_text(corpus: Corpus, reader: Reader) -> str:
    parts = [
        f"{t.title}\n{t.content}"
        for doc in corpus
        if doc.readable_by(reader)
        for t in doc.translations.values()
    ]
    return "\n".join(parts).casefold()
