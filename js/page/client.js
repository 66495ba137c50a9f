// The page's host of the chat: asks the server (POST {apiBase}/api/question, answered with
// Server-Sent Events), sends feedback, reads documents, and keeps the conversation in the
// tab's sessionStorage (per agent) so it survives a reload; follow-ups continue it.
import { ChatStore } from "../state/store.js";
import { readSse } from "./sse.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").Reference} Reference */
/** @typedef {import("../state/store.js").Ack} Ack */
/** @typedef {AbortController & {why?: string}} Stream  a request's controller, and why it
 *   was aborted ("stopped": the Stop button; else cancelled) */
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
const STORAGE_VERSION = 1;
const MAX_STORED_TURNS = 50;

/**
 * The sessionStorage key of one agent's conversation on one API base.
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
    /** @type {string|null} */
    this.saved = null;
    /** @type {((message: string) => void)|undefined} */
    this.onSessionGone = undefined;
    this.unsubscribe = this.store.subscribe(() => this.save());
  }

  /** Draw the conversation this tab held before a reload (settled turns only). */
  restore() {
    let kept;
    try {
      kept = JSON.parse(this.storage?.getItem(this.key) ?? "null");
    } catch {
      kept = null; // unreadable: start afresh
    }
    if (kept?.version !== STORAGE_VERSION || !Array.isArray(kept.turns)) return;
    this.turns = Number.isInteger(kept.next) ? kept.next : kept.turns.length;
    this.store.setSnapshot(kept.turns);
  }

  // Keep the settled turns (done or failed) of the conversation shown; a turn still
  // streaming is not kept (a reload cancels it).
  save() {
    if (!this.storage) return;
    const settled = this.store
      .turns()
      .filter((turn) => turn.status === "done" || turn.status === "error")
      .slice(-MAX_STORED_TURNS)
      .map(({ pieces, pieceCount, ...turn }) => turn);
    const value = JSON.stringify({ version: STORAGE_VERSION, next: this.turns, turns: settled });
    if (value === this.saved) return;
    this.saved = value;
    try {
      if (settled.length) this.storage.setItem(this.key, value);
      else this.storage.removeItem(this.key);
    } catch {
      // full or refused storage: the conversation just does not survive a reload
    }
  }

  /** Stop: cancel what streams (the turn keeps what it showed, marked stopped). */
  stop() {
    this.abortAll("stopped");
    return Promise.resolve({});
  }

  /** New conversation: cancel what streams and forget the conversation, here and stored. */
  newConversation() {
    this.abortAll("cancelled");
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
      return { error: "The server could not be reached." };
    }
  }

  conversationAgent() {
    return this.agent;
  }

  /**
   * Start a turn; resolves at once (the answer streams into the store).
   * @param {string} question
   * @param {boolean} followup
   * @returns {Promise<Ack>}
   */
  ask(question, followup) {
    const conversationId = followup ? this.conversationId() : null;
    if (!conversationId) this.abortAll(); // a new question: nothing of the old one matters
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
        this.fail(turnId, { code: "network", message: "The server could not be reached." });
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
      return { error: "The server could not be reached." };
    }
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
