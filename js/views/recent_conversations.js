// "Recent conversations": the signed-in reader's conversations with one agent, newest first,
// as links. A plain click (or Enter) shows one in the chat; a link opened in a new tab or
// window shows it there (its address names the conversation). The conversation shown is
// marked `aria-current`. The list says plainly when there is none, when the page is anonymous
// (anonymous conversations are listed for nobody) and when it could not be loaded. Every
// text is set as text.
import {
  element,
  removeAttributeIfSet,
  setAttributeIfChanged,
  setIfChanged,
  show,
  uniqueId,
} from "../dom/nodes.js";

/** @typedef {import("../contract/model.js").ConversationSummary} ConversationSummary */
/**
 * What the list acts through.
 * @typedef {object} RecentHost
 * @property {(conversationId: string) => void} open  show the conversation in the chat
 * @property {(conversationId: string) => string} hrefOf  its address (a new tab opens it)
 * @property {() => void} retry  load the list again
 * @property {() => number} [now]  the time, in seconds (tests)
 *
 * What the list shows: the conversations, or why there are none.
 * @typedef {{conversations: ConversationSummary[]}|{anonymous: true}|{error: string}
 *   |{loading: true}} RecentState
 */

export const EMPTY_TEXT = "No conversations yet: the ones you start are listed here.";
export const ANONYMOUS_TEXT =
  "Conversations are listed for signed-in users only: this page is anonymous.";

const UNITS = /** @type {const} */ ([
  ["year", 365 * 86400],
  ["month", 30 * 86400],
  ["week", 7 * 86400],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
]);

export class RecentConversations {
  /**
   * @param {HTMLElement} root  the element to fill (the page's `nav`)
   * @param {RecentHost} host
   */
  constructor(root, host) {
    const doc = root.ownerDocument;
    this.doc = doc;
    this.root = root;
    this.host = host;
    root.classList.add("citelab-recent");
    const heading = element(doc, "h2", "citelab-recent-heading", "Recent conversations");
    heading.id = uniqueId("citelab-recent");
    root.setAttribute("aria-labelledby", heading.id);
    this.status = element(doc, "p", "citelab-recent-status");
    this.status.setAttribute("role", "status");
    this.note = element(doc, "p", "citelab-recent-note"); // loading, or why there are none
    this.note.hidden = true;
    this.error = element(doc, "p", "citelab-recent-error");
    this.error.hidden = true;
    this.retry = element(doc, "button", "citelab-recent-retry", "Try again");
    this.retry.type = "button";
    this.retry.hidden = true;
    this.retry.addEventListener("click", () => host.retry());
    this.list = element(doc, "ol", "citelab-recent-list");
    this.list.addEventListener("click", (event) => this.follow(event));
    this.status.hidden = true;
    root.replaceChildren(heading, this.status, this.note, this.error, this.retry, this.list);
    /** @type {Map<string, {item: HTMLLIElement, link: HTMLAnchorElement,
     *   question: HTMLSpanElement, meta: HTMLSpanElement, time: HTMLTimeElement}>} */
    this.items = new Map();
    /** @type {string|null} */
    this.current = null;
  }

  /**
   * Show the list (a loading list keeps what it showed), or why there is none.
   * @param {RecentState} state
   */
  show(state) {
    const failed = "error" in state ? state.error : "";
    const conversations = "conversations" in state ? state.conversations : null;
    if (conversations) this.drawItems(conversations);
    else if ("anonymous" in state) this.drawItems([]);
    let note = "";
    if ("loading" in state) note = this.items.size ? "" : "Loading your conversations…";
    else if ("anonymous" in state) note = ANONYMOUS_TEXT;
    else if (conversations && !conversations.length) note = EMPTY_TEXT;
    setIfChanged(this.note, "textContent", note);
    show(this.note, Boolean(note));
    const error = failed ? `Could not load your conversations: ${failed}` : "";
    setIfChanged(this.error, "textContent", error);
    show(this.error, Boolean(failed));
    show(this.retry, Boolean(failed));
  }

  /**
   * How showing a conversation went (what is being opened, what went wrong), read out by
   * screen readers; "" clears it.
   * @param {string} text
   */
  say(text) {
    setIfChanged(this.status, "textContent", text);
    show(this.status, Boolean(text));
  }

  /**
   * Mark the conversation the chat shows (null: none of these).
   * @param {string|null} conversationId
   */
  setCurrent(conversationId) {
    this.current = conversationId;
    for (const [id, { item, link }] of this.items) {
      const current = id === conversationId;
      item.classList.toggle("citelab-recent-current", current);
      if (current) setAttributeIfChanged(link, "aria-current", "true");
      else removeAttributeIfSet(link, "aria-current");
    }
  }

  /** @param {ConversationSummary[]} conversations */
  drawItems(conversations) {
    const now = this.host.now ? this.host.now() : Date.now() / 1000;
    const wanted = new Set(conversations.map((summary) => summary.conversation_id));
    for (const [id, { item }] of this.items) {
      if (wanted.has(id)) continue;
      item.remove();
      this.items.delete(id);
    }
    /** @type {Element|null} */
    let previous = null;
    for (const summary of conversations) {
      const entry = this.items.get(summary.conversation_id) ?? this.buildItem(summary);
      this.fill(entry, summary, now);
      /** @type {Element|null} */
      const expected = previous ? previous.nextElementSibling : this.list.firstElementChild;
      if (expected !== entry.item) this.list.insertBefore(entry.item, expected);
      previous = entry.item;
    }
    this.setCurrent(this.current);
  }

  /** @param {ConversationSummary} summary */
  buildItem(summary) {
    const doc = this.doc;
    const item = element(doc, "li", "citelab-recent-item");
    const link = element(doc, "a", "citelab-recent-link");
    link.dataset.conversationId = summary.conversation_id;
    const question = element(doc, "span", "citelab-recent-question");
    const meta = element(doc, "span", "citelab-recent-meta");
    const time = element(doc, "time", "");
    link.append(question, meta);
    item.append(link);
    const entry = { item, link, question, meta, time };
    this.items.set(summary.conversation_id, entry);
    return entry;
  }

  /**
   * @param {{link: HTMLAnchorElement, question: HTMLSpanElement, meta: HTMLSpanElement,
   *   time: HTMLTimeElement}} entry
   * @param {ConversationSummary} summary
   * @param {number} now
   */
  fill({ link, question, meta, time }, summary, now) {
    setAttributeIfChanged(link, "href", this.host.hrefOf(summary.conversation_id));
    setIfChanged(question, "textContent", summary.first_question || "(no question)");
    const count = Number.isInteger(summary.turns) ? summary.turns : 0;
    const updated = Number(summary.updated_at);
    const asked = `${count} ${count === 1 ? "question" : "questions"}`;
    if (Number.isFinite(updated)) {
      const when = new Date(updated * 1000);
      setAttributeIfChanged(time, "datetime", when.toISOString());
      setAttributeIfChanged(time, "title", when.toLocaleString("en"));
      setIfChanged(time, "textContent", ago(updated, now));
      if (meta.firstChild?.textContent !== `${asked} · ` || time.parentNode !== meta) {
        meta.replaceChildren(`${asked} · `, time);
      }
    } else {
      setIfChanged(meta, "textContent", asked);
    }
  }

  // A plain click shows the conversation here; a click meant for a new tab or window (a
  // modifier, the middle button) is left to the browser.
  /** @param {MouseEvent} event */
  follow(event) {
    const target = /** @type {Element|null} */ (event.target);
    const link = /** @type {HTMLAnchorElement|null} */ (
      target?.closest?.("a.citelab-recent-link") ?? null
    );
    const id = link?.dataset.conversationId;
    if (!link || id === undefined) return;
    const elsewhere = event.metaKey || event.ctrlKey || event.shiftKey || event.altKey;
    if (event.button !== 0 || elsewhere) return;
    event.preventDefault();
    this.host.open(id);
  }
}

/**
 * How long ago `then` was, in words ("5 minutes ago", "yesterday", "just now").
 * @param {number} then  seconds
 * @param {number} now  seconds
 */
export function ago(then, now) {
  const seconds = Math.round(then - now);
  const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return "just now";
}
