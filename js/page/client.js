// The page's host of the chat: asks the server (POST {apiBase}/api/question, answered with
// Server-Sent Events), sends feedback, reads documents, lists the reader's conversations and
// shows one again from the server's store (GET {apiBase}/api/conversations[/{id}]); follow-ups
// continue it. The tab's sessionStorage keeps only which conversation is open, per agent, so
// a reload (or coming back to the agent's page) shows it again from the server.
import { ChatStore } from "../state/store.js";
import { historyTurns, isHistory, summariesOf } from "./history.js";
import { readSse } from "./sse.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").Reference} Reference */
/** @typedef {import("../state/store.js").Ack} Ack */
/** @typedef {import("../contract/model.js").ConversationSummary} ConversationSummary */
/** @typedef {AbortController & {why?: string}} Stream  a request's controller, and why it
 *   was aborted ("stopped": the Stop button; else cancelled) */
/**
 * How opening a conversation went: `stale` when a question or another conversation came
 * first (nothing changed), else an `error` to show.
 * @typedef {{error?: string, code?: string, stale?: boolean}} Opened
 */
/**
 * @typedef {object} ClientOptions
 * @property {string} [apiBase]
 * @property {string} [agent]
 * @property {string} [csrfToken]
 * @property {typeof fetch} [fetch]
 * @property {Pick<Storage, "getItem"|"setItem"|"removeItem">|null} [storage]  (default:
 *   the tab's sessionStorage)
 */

const EVENTS = new Set(["references", "token", "done", "error"]);
const STORAGE_VERSION = 2;
const UNREACHABLE = "The server could not be reached.";

/**
 * The sessionStorage key of one agent's open conversation on one API base.
 * @param {string} apiBase
 * @param {string} agent
 */
export function storageKey(apiBase, agent) {
  return `citelab:page:${apiBase}:${agent}`;
}

export class PageClient {
  /** @param {ClientOptions} [options] */
  constructor({
    apiBase = "",
    agent = "default",
    csrfToken = "",
    fetch: fetchImpl,
    storage,
  } = {}) {
    this.apiBase = apiBase.replace(/\/+$/, "");
    this.agent = agent;
    this.csrfToken = csrfToken;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.storage = storage === undefined ? sessionStorageOf() : storage;
    this.key = storageKey(this.apiBase, agent);
    this.store = new ChatStore();
    this.turns = 0;
    /** @type {Set<Stream>} */
    this.inFlight = new Set();
    /** @type {string|null|undefined} */
    this.saved = undefined; // the conversation id last written to storage
    /** @type {string|null} */
    this.openedAgent = null; // the agent of a conversation shown again (it keeps answering)
    this.opening = 0; // counts opens and questions: a conversation arriving late is dropped
    /** @type {((message: string) => void)|undefined} */
    this.onSessionGone = undefined;
    /** @type {((turn: Turn) => void)|undefined} */
    this.onAnswered = undefined; // a turn's answer is done (the recent list changed)
    this.unsubscribe = this.store.subscribe(() => this.save());
  }

  /** The conversation this tab had open with the agent (from sessionStorage), if any. */
  storedConversation() {
    let kept;
    try {
      kept = JSON.parse(this.storage?.getItem(this.key) ?? "null");
    } catch {
      return null; // unreadable: start afresh
    }
    if (kept?.version === STORAGE_VERSION && typeof kept.conversation_id === "string") {
      return kept.conversation_id;
    }
    // Version 1 kept the turns themselves: the conversation they belong to.
    const turns = kept?.version === 1 && Array.isArray(kept.turns) ? kept.turns : [];
    for (let i = turns.length - 1; i >= 0; i--) {
      if (typeof turns[i]?.conversation_id === "string") return turns[i].conversation_id;
    }
    return null;
  }

  /**
   * Show again the conversation `conversationId`, else the one this tab had open.
   * @param {string|null} [conversationId]
   * @returns {Promise<Opened>}
   */
  async restore(conversationId = null) {
    const id = conversationId || this.storedConversation();
    if (!id) return {};
    const opened = await this.open(id);
    // The one this tab had open has ended (expired, or never was): forget it.
    if (!conversationId && opened.code === "not_found") this.storage?.removeItem(this.key);
    return opened;
  }

  // Keep which conversation is shown (not its turns: the server has them).
  save() {
    if (!this.storage) return;
    const id = this.conversationId();
    if (id === this.saved) return;
    this.saved = id;
    try {
      const kept = { version: STORAGE_VERSION, conversation_id: id };
      if (id) this.storage.setItem(this.key, JSON.stringify(kept));
      else this.storage.removeItem(this.key);
    } catch {
      // full or refused storage: the conversation just is not shown again after a reload
    }
  }

  /**
   * Show a conversation from the server's store in the chat, in place of the one shown (which
   * stays until this one has arrived): GET {apiBase}/api/conversations/{id}.
   * @param {string} conversationId
   * @returns {Promise<Opened>}
   */
  async open(conversationId) {
    const ticket = ++this.opening;
    let response;
    try {
      response = await this.get(`/api/conversations/${encodeURIComponent(conversationId)}`);
    } catch {
      return ticket === this.opening ? { error: UNREACHABLE } : { stale: true };
    }
    /** @type {unknown} */
    let history = null;
    /** @type {{code: string, message: string}|null} */
    let error = null;
    if (response.ok) history = await response.json().catch(() => null);
    else error = await errorOf(response);
    if (ticket !== this.opening) return { stale: true };
    if (error) {
      if (error.code === "session_expired") this.onSessionGone?.(error.message);
      return { error: error.message, code: error.code };
    }
    if (!isHistory(history)) return { error: "The server sent an unreadable conversation." };
    this.abortAll("cancelled");
    this.store.reset();
    this.openedAgent = history.agent;
    this.store.setSnapshot(historyTurns(history, () => `p${++this.turns}`));
    return {};
  }

  /**
   * The reader's recent conversations with the agent, newest first:
   * GET {apiBase}/api/conversations?agent=…&limit=….
   * @param {number} [limit]
   * @returns {Promise<{conversations?: ConversationSummary[], error?: string}>}
   */
  async conversations(limit = 20) {
    const query = new URLSearchParams({ agent: this.agent, limit: String(limit) });
    let response;
    try {
      response = await this.get(`/api/conversations?${query}`);
    } catch {
      return { error: UNREACHABLE };
    }
    if (!response.ok) {
      const error = await errorOf(response);
      if (error.code === "session_expired") this.onSessionGone?.(error.message);
      return { error: error.message };
    }
    const body = await response.json().catch(() => undefined);
    if (body === undefined) return { error: "The server sent an unreadable list." };
    return { conversations: summariesOf(body) };
  }

  /** Stop: cancel what streams (the turn keeps what it showed, marked stopped). */
  stop() {
    this.abortAll("stopped");
    return Promise.resolve({});
  }

  /** New conversation: cancel what streams and forget the conversation, here and stored. */
  newConversation() {
    this.abortAll("cancelled");
    this.opening++;
    this.openedAgent = null;
    this.store.reset();
    return Promise.resolve({});
  }

  /**
   * The local document view's document: POST {apiBase}/api/document.
   * @param {Reference} reference
   * @returns {Promise<{document?: import("../views/chat_view.js").SourceDocument,
   *   error?: string}>}
   */
  async document(reference) {
    try {
      const body = { agent: this.conversationAgent(), uri: reference.uri };
      const response = await this.post("/api/document", body, "application/json");
      if (!response.ok) return { error: (await errorOf(response)).message };
      return { document: await response.json() };
    } catch {
      return { error: UNREACHABLE };
    }
  }

  // The agent of the conversation shown: one shown again keeps its own (the server pins a
  // conversation to its agent).
  conversationAgent() {
    return this.openedAgent ?? this.agent;
  }

  /**
   * Start a turn; resolves at once (the answer streams into the store).
   * @param {string} question
   * @param {boolean} followup
   * @returns {Promise<Ack>}
   */
  ask(question, followup) {
    const conversationId = followup ? this.conversationId() : null;
    this.opening++; // a conversation still arriving would replace this question: drop it
    if (!conversationId) {
      this.abortAll(); // a new question: nothing of the old one matters
      this.openedAgent = null;
    }
    const turnId = `p${++this.turns}`;
    this.store.receive({
      type: "turn_start",
      turn_id: turnId,
      question,
      followup: Boolean(conversationId),
    });
    /** @type {{agent: string, question: string, conversation_id?: string}} */
    const body = { agent: this.agent, question };
    if (conversationId) body.conversation_id = conversationId;
    this.stream(turnId, body);
    return Promise.resolve({});
  }

  conversationId() {
    const turns = this.store.turns();
    for (let i = turns.length - 1; i >= 0; i--)
      if (turns[i].conversation_id) return turns[i].conversation_id;
    return null;
  }

  /**
   * @param {string} turnId
   * @param {object} body
   */
  async stream(turnId, body) {
    /** @type {Stream} */
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      const response = await this.post(
        "/api/question",
        body,
        "text/event-stream",
        controller.signal,
      );
      if (!response.ok) {
        const error = await errorOf(response);
        if (error.code === "session_expired") this.onSessionGone?.(error.message);
        this.fail(turnId, error);
        return;
      }
      if (!response.body) throw new Error("no body");
      await readSse(response.body, (event) => this.dispatch(turnId, event));
      const turn = this.store.turns().find((candidate) => candidate.turn_id === turnId);
      if (turn?.status === "done") this.onAnswered?.(turn);
      if (turn && (turn.status === "pending" || turn.status === "streaming")) {
        this.fail(turnId, {
          code: "incomplete",
          message: "The answer stopped before it was complete.",
        });
      }
    } catch (error) {
      if (controller.signal.aborted) {
        const stopped = controller.why === "stopped";
        this.fail(turnId, {
          code: stopped ? "stopped" : "cancelled",
          message: stopped ? "Stopped: the answer above is incomplete." : "Cancelled.",
        });
      } else {
        this.fail(turnId, { code: "network", message: UNREACHABLE });
      }
    } finally {
      this.inFlight.delete(controller);
    }
  }

  /**
   * @param {string} turnId
   * @param {import("./sse.js").SseEvent} event
   */
  dispatch(turnId, { event, data }) {
    if (!EVENTS.has(event)) return;
    let payload;
    try {
      payload = JSON.parse(data);
    } catch {
      this.fail(turnId, { code: "protocol", message: "The server sent an unreadable event." });
      return;
    }
    this.store.receive({ ...payload, type: event, turn_id: turnId });
  }

  /**
   * @param {string} turnId
   * @param {{code: string, message: string}} error
   */
  fail(turnId, { code, message }) {
    this.store.receive({ type: "error", turn_id: turnId, code, message });
  }

  /**
   * @param {Turn} turn
   * @param {"up"|"down"} value
   * @param {string} [comment]
   * @returns {Promise<Ack>}
   */
  async feedback(turn, value, comment) {
    /** @type {{conversation_id: string|null, turn: number|null|undefined, value: string,
     *   comment?: string}} */
    const body = { conversation_id: turn.conversation_id, turn: turn.turn, value };
    if (comment) body.comment = comment;
    try {
      const response = await this.post("/api/feedback", body, "application/json");
      if (response.ok) return {};
      const error = await errorOf(response);
      if (error.code === "session_expired") this.onSessionGone?.(error.message);
      return { error: error.message };
    } catch {
      return { error: UNREACHABLE };
    }
  }

  /**
   * A read: no body, no CSRF token (the session cookie or a bearer token authenticates).
   * @param {string} path
   */
  get(path) {
    return this.fetch(`${this.apiBase}${path}`, {
      method: "GET",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
  }

  /**
   * @param {string} path
   * @param {object} body
   * @param {string} accept
   * @param {AbortSignal} [signal]
   */
  post(path, body, accept, signal) {
    return this.fetch(`${this.apiBase}${path}`, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: accept,
        "X-CSRF-Token": this.csrfToken,
      },
      body: JSON.stringify(body),
      signal,
    });
  }

  /** @param {string} [why] */
  abortAll(why = "cancelled") {
    for (const controller of this.inFlight) {
      controller.why = why;
      controller.abort();
    }
    this.inFlight.clear();
  }
}

// Error bodies are {error: {code, message}}; anything else gets a generic message.
/**
 * @param {Response} response
 * @returns {Promise<{code: string, message: string}>}
 */
async function errorOf(response) {
  try {
    const { error } = await response.json();
    if (error?.message)
      return { code: String(error.code ?? response.status), message: String(error.message) };
  } catch {
    // not JSON: fall through
  }
  return { code: String(response.status), message: `The server answered ${response.status}.` };
}

function sessionStorageOf() {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null; // storage refused (e.g. disabled cookies)
  }
}
