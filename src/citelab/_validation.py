"""pydantic validation errors as lines a person can act on: where, which key, what is wrong.

Every loader of files (corpora, datasets, agents, users, suites) reports every problem at once,
each on its own line that names the file (and line), the dotted key and pydantic's message::

    agents.toml: agents.x.retrieval.max_results: Input should be greater than 0
    corpus.jsonl:4: field entity_id: String should match pattern ...
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["validation_problems"]


def validation_problems(
    exc: ValidationError, where: str, *, key: str = "", label: str = "", whole: str = ""
) -> list[str]:
    """One ``"<where>: <label><key>.<loc>: <message>"`` line per error of ``exc``.

    ``key`` is the dotted position of the validated value in its file (``agents.x``,
    ``users[0]``); ``whole`` names the value itself when an error has no location of its own
    (a model-level check); ``label`` reads before the key (``"field "``, ``"key "``). An empty
    ``where`` leaves the file out. Input values are never quoted: they may be secrets.
    """
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        parts = [key] if key else []
        dotted = ".".join(parts + [str(part) for part in error["loc"]])
        problem = f"{label}{dotted or whole}: {error['msg']}"
        lines.append(f"{where}: {problem}" if where else problem)
    return lines
