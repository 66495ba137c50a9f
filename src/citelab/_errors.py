"""The one exception family of citelab.

Every error citelab raises on purpose is a ``CitelabError``. Third-party errors are
translated at the boundary (``raise NotFound(...) from exc``)::

    CitelabError
    ├── InvalidInput         bad input from a caller (HTTP 400)
    │   └── ContractViolation  a message breaks the citation contract; carries every violation
    ├── NotFound             no such thing, or not yours to see (HTTP 404)
    ├── Conflict             the request cannot run in the current state (HTTP 409)
    ├── ConfigError          a configuration file or value is wrong (names the file and key)
    ├── ModelError           a model call failed (network, API, malformed stream) (HTTP 502)
    │   ├── ModelTimeout       no first token, or no answer, within its deadline (HTTP 504)
    │   └── ModelUnavailable   the model cannot take the call now (HTTP 503, may say when)
    ├── Unavailable          a resource is busy now (a locked database) (HTTP 503)
    ├── MissingDependency    an optional dependency is not installed
    └── WorkerLost           an evaluation's worker died for good, or its cluster went away
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = [
    "CitelabError",
    "ConfigError",
    "Conflict",
    "ContractViolation",
    "InvalidInput",
    "MissingDependency",
    "ModelError",
    "ModelTimeout",
    "ModelUnavailable",
    "NotFound",
    "Unavailable",
    "WorkerLost",
]


class _Violation(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...


class CitelabError(Exception):
    """Root of every error citelab raises on purpose."""

    #: Stable machine-readable code, used by transports and in logs.
    code: str = "citelab_error"
    #: HTTP status a transport maps this error to.
    http_status: int = 500


class InvalidInput(CitelabError):
    """The caller's input is wrong: the message says what and where."""

    code = "invalid_input"
    http_status = 400


class ContractViolation(InvalidInput):
    """A message breaks the citation contract; ``violations`` lists every problem found."""

    code = "contract_violation"

    def __init__(self, violations: Sequence[_Violation]) -> None:
        self.violations = list(violations)
        lines = [f"{v.path}: {v.message} [{v.code}]" for v in self.violations]
        count = len(self.violations)
        super().__init__(f"{count} contract violation(s):\n" + "\n".join(lines))


class NotFound(CitelabError):
    """The thing asked for does not exist, or the caller may not see it."""

    code = "not_found"
    http_status = 404


class Conflict(CitelabError):
    """The request cannot run in the current state (agent disabled, retrieval unresolved)."""

    code = "conflict"
    http_status = 409


class ConfigError(CitelabError):
    """A configuration file or value is wrong; the message names the file and the key."""

    code = "config_error"
    http_status = 500


class ModelError(CitelabError):
    """A model call failed: network, API error, or a malformed stream."""

    code = "model_error"
    http_status = 502
    #: Seconds after which asking again may succeed (``Retry-After``), when known.
    retry_after: float | None = None


class ModelTimeout(ModelError):
    """The model sent no first token, or the answer was not done, within its deadline."""

    code = "model_timeout"
    http_status = 504


class ModelUnavailable(ModelError):
    """The model cannot take the call now (unreachable, overloaded, rate-limited)."""

    code = "model_unavailable"
    http_status = 503

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(CitelabError):
    """Something the request needs is busy now (a locked database); ask again later."""

    code = "unavailable"
    http_status = 503

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MissingDependency(CitelabError):
    """An optional dependency is needed for this feature but is not installed."""

    code = "missing_dependency"
    http_status = 500

    def __init__(self, package: str, feature: str, extra: str | None = None) -> None:
        hint = f"pip install 'citelab[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{feature} needs the '{package}' package: {hint}")
        self.package = package


class WorkerLost(CitelabError):
    """A worker process of an evaluation died for good (a Ray actor restarted too often, a
    scoring process killed), or the cluster went away; the message says what was running."""

    code = "worker_lost"
    http_status = 500
