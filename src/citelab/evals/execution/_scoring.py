"""What records are scored with (:class:`ScoringJob`), and what of it crosses to a worker
process (:class:`PortableScoring`: the scorers' configurations, never the scorers, which may
hold a model client)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citelab._errors import ConfigError
from citelab.evals.dataset import Case
from citelab.evals.judges import DeferringJudge, Judge, build_judge
from citelab.evals.scorers import Scorer, build_scorers

__all__ = ["PortableScoring", "ScoringJob", "concurrent_judges"]


@dataclass(frozen=True)
class ScoringJob:
    """The gold cases and the scorers that score a set of records."""

    cases: Mapping[tuple[str, str], Case]
    """``(dataset, case_id)`` → the case a record answered."""
    scorers: Sequence[Scorer]
    concurrency: int | None = None
    """With a model judge: records scored at once, their questions asked concurrently in one
    event loop (default: the judges' largest ``concurrency``)."""

    def judges(self) -> list[DeferringJudge]:
        """The model judges among the scorers' (see :func:`concurrent_judges`)."""
        return concurrent_judges(self.scorers)

    def portable(self) -> PortableScoring:
        """The scorers as configurations a worker process rebuilds them from."""
        return PortableScoring(
            tuple(scorer.config() for scorer in self.scorers), _judge_groups(self.scorers)
        )


@dataclass(frozen=True)
class PortableScoring:
    """Scorers as their configurations, and which of them shared one judge."""

    specs: tuple[dict[str, Any], ...]
    groups: tuple[int | None, ...] = ()
    """For each scorer, a number naming the judge instance it held (scorers that shared one
    get the same number), or None for a scorer without a judge. Rebuilt, scorers that shared
    a judge share one again, so an LLM judge's verdicts serve all of them, as in one process."""

    def build(self) -> list[Scorer]:
        """The scorers, rebuilt (one judge per group); a configuration that does not rebuild
        is a :class:`~citelab.ConfigError` naming the cause."""
        try:
            return build_scorers(self._configs())
        except Exception as exc:
            raise ConfigError(
                f"a worker process cannot rebuild the scorers from their configurations: "
                f"{exc} (a scorer or judge registered only in the calling process, a "
                "notebook's, is unknown there: score in that process)"
            ) from exc

    def _configs(self) -> list[dict[str, Any]]:
        judges: dict[int, Judge] = {}
        configs: list[dict[str, Any]] = []
        for index, spec in enumerate(self.specs):
            config = dict(spec)
            group = self.groups[index] if index < len(self.groups) else None
            if group is not None:
                judge = judges.get(group)
                if judge is None:
                    judge = judges[group] = build_judge(config["judge"])
                config["judge"] = judge
            configs.append(config)
        return configs


def concurrent_judges(scorers: Sequence[Scorer]) -> list[DeferringJudge]:
    """The deferring judges (judges that ask a model) the scorers use, each once, in order."""
    found: dict[int, DeferringJudge] = {}
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        if isinstance(judge, DeferringJudge):
            found.setdefault(id(judge), judge)
    return list(found.values())


def _judge_groups(scorers: Sequence[Scorer]) -> tuple[int | None, ...]:
    seen: dict[int, int] = {}
    groups: list[int | None] = []
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        if judge is None or "judge" not in scorer.config():
            groups.append(None)
        else:
            groups.append(seen.setdefault(id(judge), len(seen)))
    return tuple(groups)
