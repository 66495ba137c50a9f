// The standalone web page (`citelab serve`): the same chat view as the notebook, acting
// through the page's client (client.js), and the reader's recent conversations with the
// agent. `mountAll` mounts it on every element with `data-citelab-page` (config in data-
// attributes), so the page needs no inline script.
import { ChatView } from "../views/chat_view.js";
import { RecentConversations } from "../views/recent_conversations.js";
import { isHtml } from "../dom/nodes.js";
import { PageClient } from "./client.js";

/**
 * @typedef {import("./client.js").ClientOptions & {feedbackEnabled?: boolean,
 *   placeholder?: string, showSources?: boolean, starters?: string[],
 *   schedule?: (draw: () => void) => () => void, signedIn?: boolean,
 *   conversationId?: string|null, now?: () => number}} PageOptions
 *   `signedIn`: false on an anonymous page (its conversations are listed for nobody);
 *   `conversationId`: show this conversation (a recent conversation opened in a new tab).
 */

// Said when a conversation cannot be shown because the server does not know it (for this
// reader): it expired, or it is someone else's.
const GONE = "it no longer exists (conversations expire after a while), or it is not yours.";

/**
 * Mount the chat into `root`.
 * Elements with `data-citelab-sources-for="<root id>"` are filled with the Sources list too,
 * and those with `data-citelab-conversations-for="<root id>"` with the recent conversations.
 * @param {HTMLElement} root
 * @param {PageOptions} [options]
 */
export function mountPage(root, options = {}) {
  const client = new PageClient(options);
  const doc = root.ownerDocument;
  client.onSessionGone = (message) => showSignedOut(doc, message);
  const panels = forRoot(doc, root, "citelab-sources-for");
  const recent = recentConversations(client, forRoot(doc, root, "citelab-conversations-for"), {
    signedIn: options.signedIn ?? true,
    now: options.now,
  });
  recent.refresh();
  const restored = recent.opening(client.restore(options.conversationId ?? null), true);
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
    restored,
    refreshed: () => recent.refreshed,
    destroy: () => {
      client.abortAll();
      client.unsubscribe();
      recent.unsubscribe();
    },
  };
}

/**
 * The elements of `doc` whose `data-<name>` names `root`'s id.
 * @param {Document} doc
 * @param {HTMLElement} root
 * @param {string} name  e.g. "citelab-sources-for"
 * @returns {HTMLElement[]}
 */
function forRoot(doc, root, name) {
  if (!root.id) return [];
  return [...doc.querySelectorAll(`[data-${name}="${cssEscape(doc, root.id)}"]`)].filter(isHtml);
}

/**
 * The recent conversations lists of one chat: loaded at start and after each answer (a new
 * conversation shows at the top after its first), marking the conversation the chat shows;
 * a link followed in place shows its conversation in the chat.
 * @param {PageClient} client
 * @param {HTMLElement[]} elements
 * @param {{signedIn: boolean, now?: () => number}} options
 */
function recentConversations(client, elements, { signedIn, now }) {
  const lists = elements.map(
    (element) =>
      new RecentConversations(element, {
        open: (id) => {
          recent.opening(client.open(id), false);
        },
        hrefOf: (id) => conversationHref(element.ownerDocument, client.agent, id),
        retry: () => recent.refresh(),
        ...(now ? { now } : {}),
      }),
  );
  /** @type {string|null} */
  let current = null;
  // The conversation shown changed: mark it, and what was said about the last one goes.
  const markCurrent = () => {
    const id = client.conversationId();
    if (id === current) return;
    current = id;
    lists.forEach((list) => {
      list.setCurrent(id);
      list.say("");
    });
  };
  const recent = {
    /** @type {Promise<void>} */
    refreshed: Promise.resolve(),
    unsubscribe: client.store.subscribe(markCurrent),
    refresh() {
      if (!lists.length) return;
      if (!signedIn) {
        lists.forEach((list) => list.show({ anonymous: true }));
        return;
      }
      lists.forEach((list) => list.show({ loading: true }));
      recent.refreshed = client.conversations().then((result) => {
        const state = result.conversations
          ? { conversations: result.conversations }
          : { error: result.error ?? "" };
        lists.forEach((list) => list.show(state));
      });
    },
    /**
     * Say how opening a conversation goes.
     * @param {Promise<import("./client.js").Opened>} opened
     * @param {boolean} atStart  the one this tab had open (or its address names)
     */
    async opening(opened, atStart) {
      if (!atStart) lists.forEach((list) => list.say("Opening the conversation…"));
      const { error, code, stale } = await opened;
      if (stale) return;
      const why = code === "not_found" ? GONE : error;
      const which = atStart ? "the conversation this page had open" : "the conversation";
      const message = why
        ? `Could not show ${which}: ${why}`
        : atStart
          ? ""
          : "The conversation is shown: ask a follow-up to continue it.";
      lists.forEach((list) => list.say(message));
    },
  };
  client.onAnswered = () => recent.refresh();
  return recent;
}

/**
 * The address of the page showing one conversation (a recent conversation's link).
 * @param {Document} doc
 * @param {string} agent
 * @param {string} conversationId
 */
function conversationHref(doc, agent, conversationId) {
  const url = new URL(doc.defaultView?.location.href ?? "http://localhost/");
  const query = new URLSearchParams({ agent, conversation: conversationId });
  return `${url.pathname}?${query}`;
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

/**
 * The conversation the page's address names (`?conversation=`), taken out of the address so
 * that a reload shows the conversation open then (kept in sessionStorage), not this one.
 * @param {Document} doc
 */
function conversationInAddress(doc) {
  const win = doc.defaultView;
  if (!win) return null;
  const url = new URL(win.location.href);
  const id = url.searchParams.get("conversation");
  if (id === null) return null;
  url.searchParams.delete("conversation");
  win.history.replaceState(win.history.state, "", url);
  return id || null;
}

/**
 * Mount every `[data-citelab-page]` element of `doc` (done on import in a browser);
 * `options` are added to each one's (tests: a fetch, a storage).
 * @param {Document} [doc]
 * @param {PageOptions} [options]
 */
export function mountAll(doc = globalThis.document, options = {}) {
  /** @type {ReturnType<typeof mountPage>[]} */
  const mounted = [];
  const conversationId = conversationInAddress(doc);
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
      signedIn,
    } = root.dataset;
    mounted.push(
      mountPage(root, {
        apiBase,
        agent,
        csrfToken,
        placeholder,
        feedbackEnabled: feedbackEnabled === "true",
        starters: startersOf(starters),
        signedIn: signedIn !== "false",
        conversationId: mounted.length ? null : conversationId, // the page's first chat
        ...options,
      }),
    );
  }
  return mounted;
}
