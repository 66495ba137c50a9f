// The standalone web page (`citelab serve`): the same chat view as the notebook, acting
// through the page's client (client.js). `mountAll` mounts it on every element with
// `data-citelab-page` (config in data- attributes), so the page needs no inline script.
import { ChatView } from "../views/chat_view.js";
import { PageClient } from "./client.js";

/**
 * Mount the chat into `root`.
 * @param {HTMLElement} root
 * @param {{apiBase?: string, agent?: string, csrfToken?: string, feedbackEnabled?: boolean,
 *   placeholder?: string, fetch?: typeof fetch, schedule?: Function}} options
 * Elements with `data-citelab-sources-for="<root id>"` are filled with the Sources list too.
 */
export function mountPage(root, options = {}) {
  const client = new PageClient(options);
  client.restore();
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
