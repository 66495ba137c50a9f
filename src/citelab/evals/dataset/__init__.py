"""Gold data: evaluation datasets of JSONL cases (readers, turns, gold claims and the
entities that support them, expected no-answers, multi-round scenarios), loaded and checked;
and ALCE's eval and prompt files as they are, with the exact prompt ALCE's run.py builds."""

from citelab.evals.dataset._alce import (
    ALCE_SYSTEM_MESSAGE,
    AlceItem,
    AlcePromptFile,
    AlcePromptSettings,
    alce_chat_messages,
    alce_clean_output,
    alce_document_uri,
    alce_documents,
    alce_prompts,
    load_alce_eval,
    load_alce_prompt_file,
)
from citelab.evals.dataset._dataset import (
    Case,
    Dataset,
    GoldClaim,
    GoldTurn,
    ReaderSpec,
    check_dataset,
    load_dataset,
)

__all__ = [
    "ALCE_SYSTEM_MESSAGE",
    "AlceItem",
    "AlcePromptFile",
    "AlcePromptSettings",
    "Case",
    "Dataset",
    "GoldClaim",
    "GoldTurn",
    "ReaderSpec",
    "alce_chat_messages",
    "alce_clean_output",
    "alce_document_uri",
    "alce_documents",
    "alce_prompts",
    "check_dataset",
    "load_alce_eval",
    "load_alce_prompt_file",
    "load_dataset",
]
