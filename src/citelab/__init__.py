"""citelab: a research workbench for answers with citations.

Run the citing-answer pipeline, see it in a notebook chat, and measure citation quality.
"""

from citelab._errors import (
    CitelabError,
    ConfigError,
    Conflict,
    ContractViolation,
    InvalidInput,
    MissingDependency,
    ModelError,
    NotFound,
)

__version__ = "0.1.0"

__all__ = [
    "CitelabError",
    "ConfigError",
    "Conflict",
    "ContractViolation",
    "InvalidInput",
    "MissingDependency",
    "ModelError",
    "NotFound",
    "__version__",
]
