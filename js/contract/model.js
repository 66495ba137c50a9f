// The typed model descriptions: what the Python widgets hold in traits and which custom
// messages cross the comm. PROTOCOL.md is the prose version; keep the two in step.

/**
 * @typedef {object} Reference            One source as a card shows it (citelab.events.Reference).
 * @property {number} number              The citation number [n] in this turn's text.
 * @property {string} [entity_type]
 * @property {string} [entity_id]
 * @property {string} uri                 resource_link uri (entity:<type>/<id> for entities).
 * @property {string} title               Untrusted label.
 * @property {string} [url]               Untrusted; followed only for http(s)/mailto/relative.
 * @property {string} [langcode]
 * @property {string} [snippet]           Untrusted plain text.
 * @property {string|null} [detail]       Tells same-title sources apart (e.g. "MSc").
 * @property {string|null} [passage]      The supporting passage (untrusted plain text).
 * @property {boolean} [restricted]       Access rules apply: shows a Restricted badge.
 * @property {CitedSpan[]} [cited_spans]  The sentence(s) of this source the answer's claims
 *                                        rest on (done event only; the Read view marks them).
 *
 * @typedef {object} CitedSpan            A part of a source's text a claim rests on.
 * @property {string} text                The sentence(s), untrusted plain text.
 * @property {number|null} [start]        Code point offset into the cited translation's
 *                                        `content`; null when not known.
 * @property {number|null} [end]          Code point offset, end exclusive.
 *
 * @typedef {{label: string, message?: string|null}} SuggestedReply
 *
 * @typedef {object} Turn                 One question and its answer (trait `turns` items).
 * @property {string} turn_id             Client-side id (kernel-assigned in the notebook).
 * @property {string} question
 * @property {boolean} followup           False for a new question (clears the conversation).
 * @property {"pending"|"streaming"|"done"|"error"} status
 * @property {string} text                Raw Markdown (final text once done).
 * @property {Reference[]|null} references  null while not known yet.
 * @property {SuggestedReply[]} suggested_replies
 * @property {string|null} conversation_id
 * @property {string|null} log_id
 * @property {{code: string, message: string}|null} error
 * @property {{value: "up"|"down", comment?: string}|null} feedback
 * @property {number|null} [turn]         The service's turn number (sent back with feedback).
 * @property {string|null} [trace_id]     The answer's trace id (informational).
 * @property {boolean} [no_answer]        True hides the feedback buttons.
 * @property {boolean} [withheld]         A turn shown again whose answer drew on a document
 *                                        its reader may no longer read: question only.
 * @property {import("./message.js").WireMessage|null} [message]  The AnswerMessage wire
 *                                        dict (copy as JSON, anchors).
 * @property {Rounds|null} [rounds]       Prompt and rounds (kernel only).
 * @property {string[]|null} [pieces]    Live only: the streamed pieces (see store.js).
 * @property {number} [pieceCount]        Live only: how many of `pieces` this turn holds.
 *
 * @typedef {object} Rounds               What the model was shown and wrote, per round.
 * @property {string} [system_prompt]
 * @property {ToolCall[]} [forced]
 * @property {{index?: number, finish_reason?: string, text?: string,
 *   tool_calls?: ToolCall[]}[]} rounds
 * @typedef {{name?: string, arguments?: string, error?: string|null,
 *   message?: string|null}} ToolCall
 *
 * @typedef {{path: string, code: string, message: string}} Violation
 *
 * The kernel → front end messages (PROTOCOL.md); the page's SSE events take the same shapes.
 * @typedef {{type: "turn_start", turn_id: string, question?: string, followup?: boolean}}
 *   TurnStartMessage
 * @typedef {{type: "references", turn_id: string, references?: Reference[]}} ReferencesMessage
 * @typedef {{type: "token", turn_id: string, text?: string}} TokenMessage
 * @typedef {object} DoneMessage
 * @property {"done"} type
 * @property {string} turn_id
 * @property {string} [text]
 * @property {Reference[]} [references]
 * @property {SuggestedReply[]} [suggested_replies]
 * @property {import("./message.js").WireMessage|null} [message]
 * @property {string|null} [conversation_id]
 * @property {number|null} [turn]
 * @property {string|null} [log_id]
 * @property {string|null} [trace_id]
 * @property {boolean} [no_answer]
 * @property {Rounds|null} [rounds]
 * @typedef {{type: "error", turn_id: string, code?: string, message?: string}} ErrorMessage
 * @typedef {TurnStartMessage|ReferencesMessage|TokenMessage|DoneMessage|ErrorMessage}
 *   TurnEvent
 * @typedef {{type: "ack", request_id: string, error?: string, document?: unknown}} AckMessage
 * @typedef {{type: "reset"}} ResetMessage
 * @typedef {TurnEvent|AckMessage|ResetMessage} KernelMessage
 *
 * @typedef {object} WidgetModel          What the front end uses of an anywidget model.
 * @property {(name: string) => unknown} get
 * @property {(name: string, value: unknown) => void} [set]
 * @property {(event: string, handler: (...args: never[]) => void) => void} on
 * @property {(event: string, handler: (...args: never[]) => void) => void} off
 * @property {(content: object) => void} send
 * @property {unknown} [widget_manager]   JupyterLab's manager (kernel_watch.js reads it).
 *
 * What anywidget hands a widget's `initialize` and `render` (each a different proxy of the
 * model: see kernel/widget_store.js).
 * @typedef {{model: WidgetModel}} InitializeProps
 * @typedef {{model: WidgetModel, el: HTMLElement}} RenderProps
 */

// The labelling widget (citelab.Labeller): one (claim, passages) pair at a time.
/**
 * @typedef {object} LabelPassage         One cited passage of a pair.
 * @property {number|null} [number]       The citation number the answer used.
 * @property {string} [title]             Untrusted label.
 * @property {string} [uri]               Untrusted; linked only when an allowed URL.
 * @property {string} text                The passage (untrusted plain text).
 * @property {CitedSpan[]} [cited_spans]  The sentence(s) the claim rests on (marked).
 *
 * @typedef {{judge: string, verdict: boolean}} JudgeVerdict
 *
 * @typedef {object} LabelPair            The pair to label (trait `item`).
 * @property {string} id                  Stable pair id (sent back with the label).
 * @property {string} claim               Untrusted plain text.
 * @property {LabelPassage[]} passages
 * @property {string[][]} [context]       [name, value] lines: where the pair comes from.
 * @property {JudgeVerdict[]} [verdicts]  Shown with the pair (only when asked: anchoring).
 *
 * @typedef {object} LabelProgress        Trait `progress`.
 * @property {number} decided             Labels other than skip, of these pairs.
 * @property {number} wanted              Decisions wanted (the sample).
 * @property {number} skipped
 * @property {Record<string, number>} [counts]  Labels per value.
 * @property {number} [pairs]             Pairs to choose from.
 * @property {string[]} [judges]
 * @property {string[]} [disagree]        Judges whose disagreements come first.
 * @property {number} [disagreements]
 * @property {string} [design]            uniform, stratified or disagreement.
 * @property {LabelEstimate | null} [estimate]  The share supported, from the labels so far.
 *
 * @typedef {object} LabelEstimate        The labeller's estimate after each label.
 * @property {string} method              ppi (labels and the first judge) or labels.
 * @property {number} value
 * @property {number} low
 * @property {number} high
 * @property {number} width
 * @property {number} labels
 * @property {boolean} too_few             Fewer than 30 labels or no spread (Wilson's interval).
 * @property {number | null} more          Labels still needed for ±0.05 (null: unknown).
 * @property {string[]} [unlabelled_strata]  The design's strata no label is in yet: the
 *                                         estimate is of the labelled strata's pairs only.
 *
 * @typedef {object} LastLabel            Trait `last`: the last label saved (Undo takes it).
 * @property {string} id
 * @property {string} label
 * @property {string} claim
 * @property {JudgeVerdict[]} [verdicts]
 */

// The page's conversations in the server's store (GET /api/conversations[/{id}]).
/**
 * One turn as the server gives it back (citelab.answers.HistoryTurn): GET /api/conversations/{id}.
 * @typedef {object} HistoryTurn
 * @property {number} turn
 * @property {string} question
 * @property {number} [created_at]
 * @property {boolean} [no_answer]
 * @property {boolean} [withheld]
 * @property {string|null} [answer]
 * @property {Omit<DoneMessage, "type"|"turn_id">|null} [done]
 *
 * A conversation shown again (citelab.answers.History).
 * @typedef {object} History
 * @property {string} conversation_id
 * @property {string} agent
 * @property {number} [created_at]
 * @property {number} [updated_at]
 * @property {number} [expires_at]
 * @property {HistoryTurn[]} turns
 *
 * One line of the recent conversations (citelab.answers.ConversationSummary).
 * @typedef {object} ConversationSummary
 * @property {string} conversation_id
 * @property {string} agent
 * @property {string} first_question
 * @property {number} turns
 * @property {number} created_at
 * @property {number} updated_at
 * @property {number} expires_at
 */

export const TURN_STATUSES = Object.freeze(["pending", "streaming", "done", "error"]);

/**
 * A turn still waiting for its answer or streaming it.
 * @param {unknown} status
 */
export function isOpen(status) {
  return status === "pending" || status === "streaming";
}

/**
 * A turn that has ended (answered or failed): no event changes it any more.
 * @param {unknown} status
 */
export function isSettled(status) {
  return status === "done" || status === "error";
}

/** Chat widget traits and their defaults (citelab.Chat). */
export const CHAT_TRAITS = Object.freeze({
  turns: [], // Turn[]: final state; survives a reload
  conversation_id: null, // string|null: the current conversation
  agent: "default", // string: the agent that answers
  feedback_enabled: false, // boolean: show thumbs up/down on answered turns
  placeholder: "Ask a question…", // string: the question box's placeholder
  show_sources: true, // boolean: a Sources list inside the chat (panels can show it too)
  starter_questions: [], // string[]: questions offered as chips before the first one
  _kernel_session: "", // string: header.session of the kernel process holding it (kernel_watch.js)
});

/** Sources panel traits (citelab.SourcesPanel): mirrored from its chat. */
export const SOURCES_TRAITS = Object.freeze({
  turns: [],
  heading: "Sources",
});

/** Message view traits (citelab.MessageView). */
export const MESSAGE_TRAITS = Object.freeze({
  message: null, // AnswerMessage wire dict (null when the kernel could not read one)
  violations: [], // {path, code, message}[]: contract violations the kernel found
});

/** Labeller traits (citelab.Labeller). */
export const LABEL_TRAITS = Object.freeze({
  item: null, // LabelPair|null: the pair to label; null once the sample is done
  progress: {}, // LabelProgress
  last: null, // LastLabel|null: the last label saved for these pairs (Undo takes it back)
  notices: [], // string[]: a repaired file, pairs left out, labels taken in another session
  file_name: "", // string: the labels file, as given
  show_verdicts: "after", // "after"|"before"|"never": when the judges' verdicts show
  _kernel_session: "", // string: as the chat's (kernel_watch.js)
});

/** The labels a pair can get, in the order of their buttons. */
export const LABELS = Object.freeze([
  "supported",
  "partially_supported",
  "not_supported",
  "skip",
]);

/** Every widget model (citelab.Chat, SourcesPanel, MessageView) carries this trait. */
export const COMMON_TRAITS = Object.freeze({
  _model_key: null, // string: unique hex id of the model; keys the front-end state per model
});

/** Kernel → front end custom messages (`type` values). */
export const KERNEL_MESSAGES = Object.freeze([
  "turn_start", // {turn_id, question, followup}
  "references", // {turn_id, references}
  "token", // {turn_id, text}: one or more tokens, coalesced
  // {turn_id, text, references, suggested_replies, message, conversation_id, turn,
  //  log_id?, trace_id?, no_answer, rounds?}
  "done",
  "error", // {turn_id, code, message}; code "cancelled": a new question replaced this one
  "reset", // {}: New conversation; every view clears
  "ack", // {request_id, error?, document?}; the labeller's label and undo get one too
]);

/** Front end → kernel custom messages (`type` values). */
export const FRONTEND_MESSAGES = Object.freeze([
  "ask", // {request_id, question, followup}
  "feedback", // {request_id, turn_id, value: "up"|"down", comment?}
  "stop", // {request_id}: cancel the answer streaming and the questions waiting
  "new_conversation", // {request_id}: cancel and forget the conversation
  "document", // {request_id, uri}: an entity: document for the local document view
  "reply", // message view only: {text} when a suggested-reply chip is clicked
  "label", // labeller only: {request_id, id, label}: the pair shown, labelled
  "undo", // labeller only: {request_id}: take the last label back
]);

/**
 * A list field of untrusted data: the list, or [] when it is not one.
 * @template T
 * @param {T[]|unknown} value
 * @returns {T[]}
 */
export function listOf(value) {
  return Array.isArray(value) ? value : [];
}

/**
 * Read a trait with its default when the model does not have it (older kernels).
 * @param {WidgetModel} model
 * @param {string} name
 * @param {Readonly<Record<string, unknown>>} defaults
 * @returns {unknown}
 */
export function trait(model, name, defaults) {
  const value = model.get(name);
  return value === undefined || value === null ? defaults[name] : value;
}
