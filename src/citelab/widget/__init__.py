"""The notebook widgets (anywidget): the chat, its Sources panels, and a message viewer.

- :class:`Chat` — asks the answer service without blocking the kernel, streams the events
  to the front end as coalesced custom messages, keeps the settled turns in traits, routes
  feedback, and exposes the last answer (``last_message``, ``last_record()``,
  ``to_pandas()``).
- :class:`SourcesPanel` — the chat's references in a cell of their own (any number per chat).
- :class:`MessageView` — any :class:`~citelab.contract.AnswerMessage` (or its wire dict or
  JSON), validated first; violations are shown, not raised.
- :class:`TemplateLab` — one question (or a few) under several contract templates side by
  side: the prompt each produced (a diff against the first), the answers, their metrics.
- :class:`Labeller` — people label (claim, passage) pairs with the keyboard: a run's
  citations sampled with a seed, or the pairs two judges disagree on first; each label is
  saved at once to a JSON Lines file a judge card reads, and a new labeller resumes it.
- :class:`TokenBatcher` — the token coalescing the chat uses (reusable by other transports).

Each widget's MIME bundle carries sanitized HTML next to the widget view, so an exported
notebook still shows the conversation and its sources.
"""

from citelab.widget._batching import DEFAULT_INTERVAL, DEFAULT_MAX_TOKENS, TokenBatcher
from citelab.widget._chat import Chat
from citelab.widget._lab import LabResult, TemplateLab
from citelab.widget._labeller import SHOW_VERDICTS, Labeller, ShowVerdicts
from citelab.widget._message import MessageInput, MessageView
from citelab.widget._panel import SourcesPanel
from citelab.widget._service import ServiceSource
from citelab.widget._turns import RECORD_COLUMNS, ChatTurn

__all__ = [
    "DEFAULT_INTERVAL",
    "DEFAULT_MAX_TOKENS",
    "RECORD_COLUMNS",
    "SHOW_VERDICTS",
    "Chat",
    "ChatTurn",
    "LabResult",
    "Labeller",
    "MessageInput",
    "MessageView",
    "ServiceSource",
    "ShowVerdicts",
    "SourcesPanel",
    "TemplateLab",
    "TokenBatcher",
]
