"""The prompts an LLM judge can be given by name: ``"minicheck"``, for fact-checking models.

MiniCheck (Tang et al. 2024; Bespoke-MiniCheck-7B, ``bespoke-minicheck`` in Ollama) reads an
instruction as its system message and ``Document: … / Claim: …`` as the user's, and answers
"Yes" or "No". ``{"name": "llm", "prompt": "minicheck"}`` sends that layout (the instruction in
citelab's own words), which general instruction-tuned models follow too. Any other ``prompt``
is a template with ``{statement}`` and ``{evidence}``, sent as the one user message.
"""

from __future__ import annotations

__all__ = ["MINICHECK_PROMPT", "MINICHECK_SYSTEM", "NAMED_PROMPTS", "judge_messages"]

MINICHECK_SYSTEM = (
    "Decide whether the document supports the claim. The claim is supported only when the "
    "document backs every piece of information in it; if any part is missing from the document "
    'or contradicts it, it is not supported. Reply with one word: "Yes" or "No".'
)
"""The instruction of the ``minicheck`` prompt (its system message)."""

MINICHECK_PROMPT = "Document: {evidence}\nClaim: {statement}"
"""The user message of the ``minicheck`` prompt: MiniCheck's layout."""

NAMED_PROMPTS: dict[str, tuple[str, str]] = {"minicheck": (MINICHECK_SYSTEM, MINICHECK_PROMPT)}
"""Prompt name → (system message, user template)."""


def judge_messages(prompt: str, statement: str, evidence: str) -> list[dict[str, str]]:
    """The chat messages that ask ``prompt`` (a name of :data:`NAMED_PROMPTS`, or a template
    with ``{statement}`` and ``{evidence}``) about one pair."""
    named = NAMED_PROMPTS.get(prompt)
    template = named[1] if named is not None else prompt
    user = {"role": "user", "content": template.format(statement=statement, evidence=evidence)}
    if named is None:
        return [user]
    return [{"role": "system", "content": named[0]}, user]
