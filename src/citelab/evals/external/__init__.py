"""Other people's answers: files in one of :data:`ANSWER_FORMATS` (ALCE result files, vendor
responses, AnswerMessages, Inspect eval logs, or a format of one's own: an
:class:`AnswerReader` registered there) read as :class:`ExternalAnswer` s and scored by the
same scorers and reports as citelab's own runs (:func:`score_answers`, ``citelab score``).
"""

from citelab.evals.external._formats import (
    ANSWER_FORMATS,
    AnswerFormat,
    AnswerReader,
    ExternalAnswer,
    MessageReader,
    read_answers,
    to_answers,
)
from citelab.evals.external._inspect import InspectLogReader, inspect_answer, read_inspect_log
from citelab.evals.external._score import nothing_judged_message, score_answers, summary_json

ANSWER_FORMATS.register("inspect", InspectLogReader())

__all__ = [
    "ANSWER_FORMATS",
    "AnswerFormat",
    "AnswerReader",
    "ExternalAnswer",
    "InspectLogReader",
    "MessageReader",
    "inspect_answer",
    "nothing_judged_message",
    "read_answers",
    "read_inspect_log",
    "score_answers",
    "summary_json",
    "to_answers",
]
