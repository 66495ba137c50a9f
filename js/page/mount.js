// The standalone web page (`citelab serve`): the same chat view as the notebook, acting
// through the page's client (client.js). `mountAll` mounts it on every element with
// `data-citelab-page` (config in data- attributes), so the page needs no inline script.
import { ChatView } from "../views/chat_view.js";
import { isHtml } from "../dom/nodes.js";
import { PageClient } from "./client.js";

/**
 * @typedef {import("./client.js").ClientOptions & {feedbackEnabled?: boolean,
 *   placeholder?: string, showSources?: boolean, starters?: string[],
 *   schedule?: (draw: () => void) => () => void}} PageOptions
 */

/**
 * Mount the chat into `root`.
 * Elements with `data-citelab-sources-for="<root id>"` are filled with the Sources list too.
 * @param {HTMLElement} root
 * @param {PageOptions} [options]
 */
export function mountPage(root, options = {}) {
  const client = new PageClient(options);
  client.restore();
  const doc = root.ownerDocument;
  client.onSessionGone = (message) => showSignedOut(doc, message);
  /** @type {HTMLElement[]} */
  const panels = root.id
    ? [...doc.querySelectorAll(`[data-citelab-sources-for="${cssEscape(doc, root.id)}"]`)].filter(
        isHtml,
      )
    : [];
  /** @type {import("../views/chat_view.js").ChatHost} */
  const host = {
    settings: () => ({
      feedbackEnabled: Boolean(options.feedbackEnabled),
      placeholder: options.placeholder ?? "Ask a question…",
      showSources: options.showSources ?? true,
      starters: options.starters ?? [],
    }),
    ask: (question, followup) => client.ask(question, followup),
    stop: () => client.stop(),
    newConversation: () => client.newConversation(),
    document: (reference) => client.document(reference),
    feedback: (turn, value, comment) => client.feedback(turn, value, comment),
  };
  const view = new ChatView(root, client.store, host, {
    sections: panels,
    ...(options.schedule ? { schedule: options.schedule } : {}),
  });
  return {
    store: client.store,
    view,
    ask: host.ask,
    destroy: () => {
      client.abortAll();
      client.unsubscribe();
    },
  };
}

/**
 * @param {string|undefined} text
 * @returns {string[]}
 */
function startersOf(text) {
  try {
    const list = JSON.parse(text ?? "[]");
    return Array.isArray(list) ? list.filter((item) => typeof item === "string") : [];
  } catch {
    return [];
  }
}

// The header said "signed in as …": once the server says the session has ended, say so there
// (the failed turn says it too), so the page never claims a session it no longer has.
/**
 * @param {Document} doc
 * @param {string} message
 */
function showSignedOut(doc, message) {
  doc.body.dataset.citelabSignedOut = "true";
  const who = doc.querySelector(".citelab-page-header p");
  if (who) who.textContent = `Signed out: ${message}.`;
}

/**
 * @param {Document} doc
 * @param {string} value
 */
function cssEscape(doc, value) {
  return doc.defaultView?.CSS?.escape
    ? doc.defaultView.CSS.escape(value)
    : value.replace(/["\\]/g, "\\$&");
}

/** Mount every `[data-citelab-page]` element of `doc` (done on import in a browser). */
export function mountAll(doc = globalThis.document) {
  /** @type {ReturnType<typeof mountPage>[]} */
  const mounted = [];
  for (const root of doc.querySelectorAll("[data-citelab-page]")) {
    if (!isHtml(root)) continue;
    if (root.dataset.citelabMounted) continue;
    root.dataset.citelabMounted = "true";
    const {
      apiBase = "",
      agent = "default",
      csrfToken = "",
      feedbackEnabled,
      placeholder,
      starters,
    } = root.dataset;
    mounted.push(
      mountPage(root, {
        apiBase,
        agent,
        csrfToken,
        placeholder,
        feedbackEnabled: feedbackEnabled === "true",
        starters: startersOf(starters),
      }),
    );
  }
  return mounted;
}
