// The standalone web page (`citelab serve`): the same chat view as the notebook, fed by
// Server-Sent Events from POST {apiBase}/api/question. Also mounts itself on every element
// with `data-citelab-page` (config in data- attributes), so the page needs no inline script.
import { ChatView } from "./chat_view.js";
import { readSse } from "./sse.js";
import { ChatStore } from "./store.js";

const EVENTS = new Set(["references", "token", "done", "error"]);

/**
 * Mount the chat into `root`.
 * @param {HTMLElement} root
 * @param {{apiBase?: string, agent?: string, csrfToken?: string, feedbackEnabled?: boolean,
 *   placeholder?: string, fetch?: typeof fetch, schedule?: Function}} options
 * Elements with `data-citelab-sources-for="<root id>"` are filled with the Sources list too.
 */
export function mountPage(root, options = {}) {
  const client = new PageClient(options);
  const doc = root.ownerDocument;
  client.onSessionGone = (message) => showSignedOut(doc, message);
  const panels = root.id
    ? [...doc.querySelectorAll(`[data-citelab-sources-for="${cssEscape(doc, root.id)}"]`)]
    : [];
  const host = {
    settings: () => ({
      feedbackEnabled: Boolean(options.feedbackEnabled),
      placeholder: options.placeholder ?? "Ask a question…",
      showSources: options.showSources ?? true,
    }),
    ask: (question, followup) => client.ask(question, followup),
    feedback: (turn, value, comment) => client.feedback(turn, value, comment),
  };
  const view = new ChatView(root, client.store, host, {
    sections: panels,
    ...(options.schedule ? { schedule: options.schedule } : {}),
  });
  return { store: client.store, view, ask: host.ask, destroy: () => client.abortAll() };
}

class PageClient {
  constructor({ apiBase = "", agent = "default", csrfToken = "", fetch: fetchImpl } = {}) {
    this.apiBase = apiBase.replace(/\/+$/, "");
    this.agent = agent;
    this.csrfToken = csrfToken;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.store = new ChatStore();
    this.turns = 0;
    this.inFlight = new Set();
  }

  /** Start a turn; resolves at once (the answer streams into the store). */
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

  async stream(turnId, body) {
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
      await readSse(response.body, (event) => this.dispatch(turnId, event));
      const turn = this.store.turns().find((candidate) => candidate.turn_id === turnId);
      if (turn && (turn.status === "pending" || turn.status === "streaming")) {
        this.fail(turnId, {
          code: "incomplete",
          message: "The answer stopped before it was complete.",
        });
      }
    } catch (error) {
      const message = controller.signal.aborted ? "Cancelled." : "The server could not be reached.";
      this.fail(turnId, { code: controller.signal.aborted ? "cancelled" : "network", message });
    } finally {
      this.inFlight.delete(controller);
    }
  }

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

  fail(turnId, { code, message }) {
    this.store.receive({ type: "error", turn_id: turnId, code, message });
  }

  async feedback(turn, value, comment) {
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

  abortAll() {
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
  }
}

// Error bodies are {error: {code, message}}; anything else gets a generic message.
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

// The header said "signed in as …": once the server says the session has ended, say so there
// (the failed turn says it too), so the page never claims a session it no longer has.
function showSignedOut(doc, message) {
  doc.body.dataset.citelabSignedOut = "true";
  const who = doc.querySelector(".citelab-page-header p");
  if (who) who.textContent = `Signed out: ${message}.`;
}

function cssEscape(doc, value) {
  return doc.defaultView?.CSS?.escape
    ? doc.defaultView.CSS.escape(value)
    : value.replace(/["\\]/g, "\\$&");
}

/** Mount every `[data-citelab-page]` element of `doc` (done on import in a browser). */
export function mountAll(doc = globalThis.document) {
  const mounted = [];
  for (const root of doc.querySelectorAll("[data-citelab-page]")) {
    if (root.dataset.citelabMounted) continue;
    root.dataset.citelabMounted = "true";
    const {
      apiBase = "",
      agent = "default",
      csrfToken = "",
      feedbackEnabled,
      placeholder,
    } = root.dataset;
    mounted.push(
      mountPage(root, {
        apiBase,
        agent,
        csrfToken,
        placeholder,
        feedbackEnabled: feedbackEnabled === "true",
      }),
    );
  }
  return mounted;
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", () => mountAll());
  else mountAll();
}
