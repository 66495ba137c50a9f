# %% [markdown]
# # citelab quickstart: ask a question, get an answer with citations
#
# **What you learn:** load a corpus, configure an agent, ask it questions in the chat widget
# (and from code), follow the sources, and look at the answer the way other programs receive
# it: an `AnswerMessage` of MCP content blocks, validated against the citation contract.
#
# **For whom:** anyone new to citelab — researchers, prompt engineers, teachers preparing a demo.
#
# **Time to run:** about 10 seconds (the first run also builds a small search index). Everything
# runs offline: the answers come from citelab's *extractive* model, which quotes the sources it
# was shown and cites them. No network, no model weights.

# %% [markdown]
# ## 1. A corpus
#
# A corpus is a set of *entities* (documents with an `entity_type` and an `entity_id`), each with
# one or more translations, extra fields and access rules. citelab ships three invented fixture
# corpora; here we load the catalogue of the (fictional) Hollin University. `resolve_corpus_path`
# finds a fixture corpus by name, wherever citelab is installed.

# %%
import pandas as pd

from citelab.agent import AgentConfig, resolve_corpus_path
from citelab.corpus import load_corpus, summarize_corpus

corpus = load_corpus(resolve_corpus_path("university"))
summary = summarize_corpus(corpus)
print(f"{summary.entities} entities: {summary.entity_types}; languages: {summary.languages}")

pd.DataFrame(
    {
        "uri": doc.uri,
        "title": doc.translations["en"].title,
        "degree": doc.fields.get("degree", ""),
        "faculty": doc.fields.get("faculty", ""),
    }
    for doc in corpus
).head(8)

# %% [markdown]
# Several programmes share one title ("Data Science" exists as BSc, MSc and certificate): only
# the `entity:<type>/<id>` URI tells them apart. That is why citelab's sources are entities, not
# titles or URLs.
#
# ## 2. An agent
#
# An agent is configuration: its own system prompt, the corpus it searches, the model, and how
# retrieval results become numbered sources. citelab *appends* the citation contract (how to
# cite, and the numbered sources) to the agent's prompt; it never replaces it.

# %%
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.sources import RetrievalSettings

advisor = AgentConfig(
    name="advisor",
    prompt="You are the study advisor of Hollin University. Answer briefly and factually.",
    corpus="university",
    model="extractive",
    retrieval=RetrievalSettings(max_results=8, entity_cap=4),
)
# In-memory conversation and log stores keep this demo from writing anything to disk
# (the default stores are SQLite files in citelab's cache folder).
service = AnswerService(
    {"advisor": advisor}, store=MemoryConversationStore(), logs=MemoryLogStore()
)

# %% [markdown]
# ## 3. The chat widget
#
# `Chat` runs the answer service on the notebook's event loop: type a question in the box below
# and the answer streams in, with numbered, clickable sources, suggested-reply chips and
# feedback buttons. The cells after it ask from code, so the notebook also runs unattended.

# %%
from citelab.widget import Chat, SourcesPanel

chat = Chat(service, agent="advisor")
chat

# %% [markdown]
# `chat.ask(...)` returns a task; `await` it to get the finished `Answer`. The widget above shows
# the same turn as it streams.

# %%
answer = await chat.ask(
    "How many semesters and ECTS credits is the Data Science MSc, and how much is the semester fee?"
)
print(answer.text)
print()
for source in answer.sources:
    print(f"[{source.number}] {source.title} ({source.uri})")

# %% [markdown]
# A **follow-up** continues the conversation (`followup=True`): the agent keeps the sources it
# already holds and decides itself whether to search again. The suggested replies are the chips
# under the answer (a click asks them); here we print them and ask a follow-up of our own.

# %%
print("suggested replies:", [reply.label for reply in answer.suggested_replies])
followup = await chat.ask("When do applications for the Data Science MSc close?", followup=True)
print(followup.text)
print("same conversation:", followup.conversation_id == answer.conversation_id)
print("turn:", followup.turn)

# %% [markdown]
# ## 4. A Sources panel
#
# The sources can also live in a cell of their own — or in several. A `SourcesPanel` follows its
# chat: every later turn shows up in it too.

# %%
SourcesPanel(chat, heading="Sources of this conversation")

# %% [markdown]
# ## 5. The answer as other programs see it
#
# Every answer is also an `AnswerMessage`: MCP content blocks, one `text` block with the answer
# (raw Markdown) and one `resource_link` block per source. The inline anchors sit in the text
# block's `_meta["drupal.org/ai.citations"]`, the suggested replies in the message's `_meta`.
# A client that ignores `_meta` still gets a usable source list.
#
# `chat.last_message` is the newest answer's message; here we look at the first answer's (how
# many sources it cites is printed, not assumed).
#
# Citation metrics measure *support* (is each cited statement backed by its source), not
# *completeness*: an answer that leaves half the question out can still score perfect
# citation recall and precision. Claim recall (does the answer say what the gold answer says)
# measures completeness; the evaluation notebooks report both.

# %%
print("the first answer cites", len(answer.message.sources), "sources")
print("the newest message cites:", [link.uri for link in chat.last_message.sources])
message = answer.message
print(message.to_json(indent=2))

# %% [markdown]
# `validate_message` checks a message against the contract and returns **every** violation, each
# with a JSON path and a plain message (it never raises on bad input). Our message keeps the
# contract:

# %%
from citelab.contract import validate_message

violations = validate_message(message.to_wire())
print(f"contract violations: {len(violations)}")

# %% [markdown]
# To see what a violation looks like, break a copy: move the first anchor's span by one
# character, so that `citedText` no longer matches the text it claims to quote, and point the
# second anchor at a source the message does not list (its source-side quote, in
# `_meta["citelab/source_quotes"]`, then names another source than its anchor: that is caught
# too).

# %%
import copy

broken = copy.deepcopy(message.to_wire())
anchors = broken["content"][0]["_meta"]["drupal.org/ai.citations"]
anchors[0]["startIndex"] += 1
if len(anchors) > 1:
    anchors[1]["sourceUri"] = "entity:program/no-such-programme"
pd.DataFrame(violation.model_dump() for violation in validate_message(broken))

# %% [markdown]
# ## 6. Rendering a message
#
# `MessageView` draws any answer message — ours, one read from JSON, or one converted from
# another system's citation format. It validates first and shows violations instead of raising,
# so a broken message can still be inspected.

# %%
from citelab.widget import MessageView

MessageView(message)

# %%
MessageView(broken)

# %% [markdown]
# ## 7. The conversation as a table
#
# Every turn the chat ran, one row each — handy for a quick look at timings and source counts.

# %%
chat.to_pandas()

# %% [markdown]
# **Next:** `02_contract_lab.ipynb` varies the citation contract and measures the effect;
# `03_multi_round_numbering.ipynb` shows how citation numbers survive several tool calls;
# `04_evaluation_report.ipynb` runs the bundled evaluation.
