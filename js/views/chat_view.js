// The chat: a question form, the turns (question, streamed answer, placeholders, error,
// suggested-reply chips, feedback) and, optionally, its own Sources list. It draws from a
// ChatStore at most once per animation frame, only while its root is on the page, and acts
// through a `host`:
//   host.ask(question, followup) → Promise<{error?}>
//   host.feedback(turn, value, comment?) → Promise<{error?}>
//   host.settings() → {feedbackEnabled, placeholder, showSources}
//   host.stop() → Promise<{error?}>           (optional: the Stop button)
//   host.newConversation() → Promise<{error?}> (optional: the New conversation button)
//   host.copy(text) → Promise<void>            (optional: the clipboard; default navigator's)
//   host.document(reference) → Promise<{document?, error?}> (optional: entity: documents)
import { readSourceQuotes } from "../contract/message.js";
import { isOpen } from "../contract/model.js";
import { citedSpansOf, conversationSpans } from "../contract/spans.js";
import { questionForm, showFormError } from "../dom/forms.js";
import { frameScheduler, frameSlices } from "../dom/frames.js";
import { iconButton } from "../dom/icons.js";
import { element, setIfChanged, show } from "../dom/nodes.js";
import { subscribeWhileOnPage } from "../dom/presence.js";
import { provisionalHref } from "../render/citations.js";
import { QuestionBoxes } from "../state/focus.js";
import { DocumentView } from "./document_view.js";
import { HoverCard } from "./hover_card.js";
import { ReferencesController } from "./references/controller.js";
import { CITE_EVENT } from "./references/links.js";
import { ReferencesSection } from "./references/section.js";
import { TurnView } from "./turn_view.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").Reference} Reference */
/** @typedef {import("../state/store.js").Ack} Ack */
/** @typedef {import("../dom/forms.js").QuestionForm} QuestionForm */
/**
 * What the chat reads at every draw.
 * @typedef {{feedbackEnabled: boolean, placeholder: string, showSources: boolean,
 *   starters?: string[]}} ChatSettings
 *
 * The corpus document a card's Read button shows (PROTOCOL.md, `document`).
 * @typedef {{uri?: string, title?: string, content?: string, url?: string|null,
 *   langcode?: string, fields?: Record<string, unknown>}} SourceDocument
 *
 * What the chat acts through: the kernel (entries/widget_chat.js) or the page's client.
 * @typedef {object} ChatHost
 * @property {(question: string, followup: boolean) => Promise<Ack>} ask
 * @property {(turn: Turn, value: "up"|"down", comment?: string) => Promise<Ack>} feedback
 * @property {() => ChatSettings} settings
 * @property {() => Promise<Ack>} [stop]            the Stop button
 * @property {() => Promise<Ack>} [newConversation] the New conversation button
 * @property {(text: string) => Promise<void>} [copy] the clipboard (default: navigator's)
 * @property {(reference: Reference) => Promise<{document?: SourceDocument, error?: string}>}
 *   [document]                                    entity: documents (the Read button)
 *
 * @typedef {(work: (hasTime: () => boolean) => boolean) => () => void} Slices
 */

export class ChatView {
  // Set by build():
  /** @type {QuestionForm} */ askForm;
  /** @type {QuestionForm} */ followupForm;
  /** @type {HTMLDivElement} */ turnsElement;
  /** @type {HTMLDivElement} */ starters;
  /** @type {{element: HTMLDivElement, stop: HTMLButtonElement,
   *   fresh: HTMLButtonElement, status: HTMLSpanElement}} */ controls;
  /** @type {HTMLParagraphElement} */ notice;
  /** @type {DocumentView|null} */ documents;
  /** @type {ReferencesSection[]} */ sections;
  /** @type {ReferencesController[]} */ controllers;
  /** @type {QuestionBoxes} */ boxes;
  /** @type {HoverCard} */ hoverCard;
  /** @type {string|undefined} */ shownStarters;
  /** @type {boolean|undefined} */ wasDisconnected;

  /**
   * @param {HTMLElement} root
   * @param {import("../state/store.js").ChatStore} store
   * @param {ChatHost} host
   * @param {{schedule?: (draw: () => void) => () => void, sections?: HTMLElement[],
   *   slices?: Slices}} [options]
   *   `sections`: more elements to fill with the shared Sources list (page panels).
   *   `slices`: runs deferred work in slices until it returns true (marking a done turn's
   *   cited spans); returns a cancel function. Default: about 2 ms per animation frame.
   */
  constructor(
    root,
    store,
    host,
    { schedule = frameScheduler, sections = [], slices = frameSlices } = {},
  ) {
    this.root = root;
    this.slices = slices;
    this.store = store;
    this.host = host;
    this.doc = root.ownerDocument;
    /** @type {Map<string, TurnView>} */
    this.turnViews = new Map();
    this.closed = false;
    this.build(sections);
    this.requestDraw = schedule(() => this.draw());
    this.subscription = subscribeWhileOnPage(root, store, () => this.requestDraw());
    this.draw();
  }

  /** @param {HTMLElement[]} extraSections */
  build(extraSections) {
    const { doc, root } = this;
    const settings = this.host.settings();
    root.classList.add("citelab", "citelab-chat");
    const ask = questionForm(doc, {
      className: "citelab-ask",
      label: "Question",
      placeholder: settings.placeholder,
      button: "Ask",
    });
    ask.form.addEventListener("submit", (event) => this.submit(event, ask, false));
    this.askForm = ask;
    this.turnsElement = element(doc, "div", "citelab-turns");
    this.turnsElement.setAttribute("role", "log");
    this.turnsElement.setAttribute("aria-label", "Answers");
    const followup = questionForm(doc, {
      className: "citelab-followup",
      label: "Follow-up question",
      placeholder: "Ask a follow-up…",
      button: "Send",
    });
    followup.form.addEventListener("submit", (event) => this.submit(event, followup, true));
    followup.form.hidden = true;
    this.followupForm = followup;
    this.starters = element(doc, "div", "citelab-starters");
    this.starters.setAttribute("role", "group");
    this.starters.setAttribute("aria-label", "Questions to start with");
    this.starters.hidden = true;
    this.controls = this.buildControls();
    this.notice = element(doc, "p", "citelab-notice");
    this.notice.setAttribute("role", "status");
    this.notice.hidden = true;
    const ownSection = element(doc, "section", "citelab-chat-sources");
    ownSection.setAttribute("aria-label", "Sources");
    root.replaceChildren(
      this.notice,
      ask.form,
      this.starters,
      this.turnsElement,
      followup.form,
      this.controls.element,
      ownSection,
    );
    const sectionRoots = settings.showSources ? [ownSection, ...extraSections] : extraSections;
    if (!settings.showSources) ownSection.remove();
    const read = this.host.document;
    const documents = read ? new DocumentView(root, { document: read }) : null;
    this.documents = documents;
    /** @type {((reference: Reference) => void)|null} */
    const onDocument = documents
      ? (reference) => documents.open(this.withConversationSpans(reference))
      : null;
    this.sections = sectionRoots.map((node) => new ReferencesSection(node, { onDocument }));
    this.controllers = this.sections.map((section) => new ReferencesController(section));
    root.addEventListener("click", (event) => this.followCitation(event));
    this.boxes = new QuestionBoxes(root, this.store, { ask: ask.input, followup: followup.input });
    this.hoverCard = new HoverCard(root, (link) => this.citedBy(link));
  }

  /**
   * A card's reference with the cited spans of every turn that cited its source (one card
   * serves them all), for the document view to mark.
   * @param {Reference} reference
   * @returns {Reference}
   */
  withConversationSpans(reference) {
    const references = this.store.turns().flatMap((turn) => turn.references ?? []);
    return { ...reference, cited_spans: conversationSpans(reference, references) };
  }

  // Stop (while an answer streams) and New conversation (once there is one).
  buildControls() {
    const { doc } = this;
    const bar = element(doc, "div", "citelab-controls");
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "Conversation");
    const stop = iconButton(doc, "stop", "Stop", "citelab-stop");
    stop.addEventListener("click", () => this.act(this.host.stop, "Stopping…"));
    const fresh = iconButton(doc, "plus", "New conversation", "citelab-new");
    fresh.addEventListener("click", () => this.startOver());
    const status = element(doc, "span", "citelab-controls-status");
    status.setAttribute("role", "status");
    if (!this.host.stop) stop.remove();
    if (!this.host.newConversation) fresh.remove();
    bar.append(stop, fresh, status);
    return { element: bar, stop, fresh, status };
  }

  /**
   * Run one of the host's control actions, saying so while it runs and what went wrong.
   * @param {(() => Promise<Ack>)|undefined} action
   * @param {string} busy
   * @returns {Promise<Ack>}
   */
  async act(action, busy) {
    if (!action) return {};
    this.controls.status.textContent = busy;
    const result = (await action.call(this.host)) ?? {};
    this.controls.status.textContent = result.error ? result.error : "";
    return result;
  }

  async startOver() {
    const result = await this.act(this.host.newConversation, "Starting a new conversation…");
    if (result.error) return;
    this.hoverCard.hide();
    this.requestDraw();
    // The question box shows again: put the person there.
    setTimeout(() => {
      if (!this.askForm.form.hidden) this.askForm.input.focus({ preventScroll: true });
    });
  }

  /**
   * The turn view a node of the chat is in, if any.
   * @param {Element} node
   */
  turnOf(node) {
    const id = /** @type {HTMLElement|null} */ (node.closest("[data-turn-id]"))?.dataset.turnId;
    return id === undefined ? undefined : this.turnViews.get(id);
  }

  /**
   * What a marker link cites: `{reference, retrieved, number}` from its turn, or null.
   * @param {HTMLAnchorElement} link
   * @returns {import("./hover_card.js").Cited|null}
   */
  citedBy(link) {
    const turn = this.turnOf(link)?.turn;
    const number = Number(link.dataset.refIndex);
    const reference = turn?.references?.find((candidate) => Number(candidate.number) === number);
    if (!turn || !reference) return null;
    const retrieved = isOpen(turn.status);
    const quote = retrieved ? null : quoteOf(turn, link, reference);
    return { reference, retrieved, number, quote };
  }

  destroy() {
    this.closed = true;
    for (const view of this.turnViews.values()) view.stopMarking();
    this.hoverCard.hide();
    this.subscription.close();
  }

  draw() {
    // Before `subscription` is set, the constructor's own first draw.
    if (this.closed || this.subscription?.following === false) return;
    const turns = this.store.turns();
    const settings = this.host.settings();
    setIfChanged(this.askForm.input, "placeholder", settings.placeholder ?? "");
    const relinked = new Set();
    for (const controller of this.controllers) {
      for (const id of controller.sync(turns)) relinked.add(id);
    }
    const seen = new Set();
    turns.forEach((turn, index) => {
      seen.add(turn.turn_id);
      let view = this.turnViews.get(turn.turn_id);
      if (!view) {
        view = new TurnView(this, turn.turn_id);
        this.turnViews.set(turn.turn_id, view);
      }
      if (this.turnsElement.children[index] !== view.element) {
        this.turnsElement.insertBefore(view.element, this.turnsElement.children[index] ?? null);
      }
      const isLast = index === turns.length - 1;
      view.update(turn, { isLast, settings, relink: relinked.has(turn.turn_id) });
    });
    for (const [id, view] of this.turnViews) {
      if (seen.has(id)) continue;
      view.stopMarking(); // a cleared chat gets no marks
      view.element.remove();
      this.turnViews.delete(id);
    }
    const last = turns.at(-1);
    const settled = Boolean(last && (last.status === "done" || last.status === "error"));
    // Once there is a conversation the top box is gone: a follow-up continues it, and only
    // New conversation starts over (nothing erases a conversation silently).
    show(this.askForm.form, turns.length === 0);
    this.drawStarters(turns.length === 0 ? settings.starters : null);
    show(this.followupForm.form, settled);
    show(this.controls.stop, Boolean(last && isOpen(last.status)));
    show(this.controls.fresh, turns.length > 0);
    show(this.controls.element, turns.length > 0);
    this.drawDisconnected(this.store.disconnected ?? null);
    this.boxes.restoreFocus();
  }

  /**
   * The agent's starter questions, offered until the first question is asked.
   * @param {unknown} starters
   */
  drawStarters(starters) {
    const list = Array.isArray(starters)
      ? starters.filter((text) => typeof text === "string" && Boolean(text.trim()))
      : [];
    const key = list.join("\u0000");
    if (this.shownStarters !== key) {
      this.shownStarters = key;
      const buttons = list.map((text) => {
        const button = element(this.doc, "button", "citelab-chip", text);
        button.type = "button";
        button.addEventListener("click", () => this.ask(text, false));
        return button;
      });
      this.starters.replaceChildren(...buttons);
    }
    show(this.starters, list.length > 0);
  }

  // After a kernel restart (or when the widget lost its kernel) nothing can answer: say so
  // and disable every control that would ask, instead of swallowing questions.
  /** @param {string|null} message */
  drawDisconnected(message) {
    // Connected before and now: nothing to do (this runs on every streamed frame).
    if (!message && !this.wasDisconnected) return;
    this.wasDisconnected = Boolean(message);
    setIfChanged(this.notice, "textContent", message ?? "");
    show(this.notice, Boolean(message));
    this.root.classList.toggle("citelab-disconnected", Boolean(message));
    const controls = /** @type {NodeListOf<HTMLButtonElement|HTMLInputElement>} */ (
      this.root.querySelectorAll(
      ".citelab-ask input, .citelab-ask button, .citelab-followup input, " +
        ".citelab-followup button, .citelab-controls button, .citelab-chip, .citelab-thumb, " +
        ".citelab-ask-again, .citelab-feedback-comment input, .citelab-feedback-comment button",
      )
    );
    for (const control of controls) setIfChanged(control, "disabled", Boolean(message));
  }

  /**
   * The element citation [number] of a turn points at (the first Sources list's card).
   * @param {string} turn
   * @param {number} number
   * @param {Reference[]|null} references
   * @returns {{id: string}|null}
   */
  resolve(turn, number, references) {
    const section = this.sections[0];
    if (section) return section.target(turn, number);
    // No list in this view: keep a link (panels elsewhere react to the cite event).
    const known = references?.some((reference) => Number(reference.number) === number);
    return known ? { id: provisionalHref(turn, number).slice(1) } : null;
  }

  /**
   * What the citation links of `turn` are given (see resolve), as one string: while it
   * stays the same, links already drawn need no relinking.
   * @param {Turn} turn
   */
  linkTargets(turn) {
    const section = this.sections[0];
    if (section) return section.linkTargets(turn.turn_id);
    const numbers = (turn.references ?? []).map((reference) => Number(reference.number));
    return [...new Set(numbers)].sort((a, b) => a - b).join(" ");
  }

  /**
   * @param {Event} event
   * @param {QuestionForm} form
   * @param {boolean} followup
   */
  async submit(event, form, followup) {
    event.preventDefault();
    const question = form.input.value.trim();
    if (!question) {
      showFormError(form, "Please type a question first.");
      return;
    }
    showFormError(form, "");
    this.boxes.setDraft(form.input, "");
    const result = await this.host.ask(question, followup);
    if (result?.error) {
      this.boxes.setDraft(form.input, question);
      showFormError(form, result.error);
    }
  }

  /**
   * @param {string} question
   * @param {boolean} followup
   */
  ask(question, followup) {
    return this.host.ask(question, followup);
  }

  /** @param {MouseEvent} event */
  followCitation(event) {
    const target = /** @type {Element|null} */ (event.target);
    const link = /** @type {HTMLAnchorElement|null|undefined} */ (
      target?.closest?.("a[data-ref-index]")
    );
    if (!link || !this.root.contains(link) || !link.hasAttribute("href")) return;
    event.preventDefault();
    const card = this.doc.getElementById((link.getAttribute("href") ?? "").slice(1));
    if (card) {
      card.scrollIntoView?.({ block: "nearest" });
      card.focus();
      card.classList.add("citelab-source-target");
      setTimeout(() => card.classList.remove("citelab-source-target"), 1500);
    }
    const turnView = this.turnOf(link);
    const win = /** @type {Window & typeof globalThis} */ (this.doc.defaultView);
    this.root.dispatchEvent(
      new win.CustomEvent(CITE_EVENT, {
        bubbles: true,
        detail: {
          turnId: link.dataset.refTurn,
          number: Number(link.dataset.refIndex),
          conversationId: turnView?.turn?.conversation_id ?? null,
        },
      }),
    );
  }
}

/**
 * The sentence(s) of `reference` that the claim a marker closes rests on: the source quote
 * of the marker's anchor (data-anchor, set once the turn's cited spans are marked), else the
 * source's one cited span when it has exactly one (every claim citing it rests on it); null
 * when not known.
 * @param {Turn} turn
 * @param {HTMLAnchorElement} link
 * @param {Reference} reference
 * @returns {string|null}
 */
function quoteOf(turn, link, reference) {
  const anchor = link.dataset.anchor;
  if (anchor !== undefined) {
    const quote = readSourceQuotes(turn.message).get(Number(anchor));
    if (quote && quote.sourceUri === reference.uri) return quote.text;
  }
  const spans = citedSpansOf(reference);
  return spans.length === 1 ? spans[0].text : null;
}
