// The chat: a question form, the turns (question, streamed answer, placeholders, error,
// suggested-reply chips, feedback) and, optionally, its own Sources list. It draws from a
// ChatStore at most once per animation frame, only while its root is on the page, and acts
// through a `host`:
//   host.ask(question, followup) → Promise<{error?}>
//   host.feedback(turn, value, comment?) → Promise<{error?}>
//   host.settings() → {feedbackEnabled, placeholder, showSources}
import { BlockView } from "./block_view.js";
import { provisionalHref, safeTurnId } from "./citations.js";
import { element, frameScheduler, questionForm, show } from "./dom.js";
import { QuestionBoxes } from "./focus.js";
import { subscribeWhileOnPage } from "./presence.js";
import {
  CITE_EVENT,
  linkCitations,
  ReferencesController,
  ReferencesSection,
} from "./references.js";
import { BlockStream } from "./stream.js";

export class ChatView {
  /**
   * @param {HTMLElement} root
   * @param {import("./store.js").ChatStore} store
   * @param {object} host
   * @param {{schedule?: (draw: () => void) => () => void, sections?: HTMLElement[]}} options
   *   `sections`: more elements to fill with the shared Sources list (page panels).
   */
  constructor(root, store, host, { schedule = frameScheduler, sections = [] } = {}) {
    this.root = root;
    this.store = store;
    this.host = host;
    this.doc = root.ownerDocument;
    this.turnViews = new Map();
    this.closed = false;
    this.build(sections);
    this.requestDraw = schedule(() => this.draw());
    this.subscription = subscribeWhileOnPage(root, store, () => this.requestDraw());
    this.draw();
  }

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
    const ownSection = element(doc, "section", "citelab-chat-sources");
    ownSection.setAttribute("aria-label", "Sources");
    root.replaceChildren(ask.form, this.turnsElement, followup.form, ownSection);
    const sectionRoots = settings.showSources ? [ownSection, ...extraSections] : extraSections;
    if (!settings.showSources) ownSection.remove();
    this.sections = sectionRoots.map((node) => new ReferencesSection(node));
    this.controllers = this.sections.map((section) => new ReferencesController(section));
    root.addEventListener("click", (event) => this.followCitation(event));
    this.boxes = new QuestionBoxes(root, this.store, { ask: ask.input, followup: followup.input });
  }

  destroy() {
    this.closed = true;
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
      view.element.remove();
      this.turnViews.delete(id);
    }
    const last = turns.at(-1);
    show(
      this.followupForm.form,
      Boolean(last && (last.status === "done" || last.status === "error")),
    );
    this.boxes.restoreFocus();
  }

  /** The element citation [number] of a turn points at (the first Sources list's card). */
  resolve(turn, number, references) {
    const section = this.sections[0];
    if (section) return section.target(turn, number);
    // No list in this view: keep a link (panels elsewhere react to the cite event).
    const known = references?.some((reference) => Number(reference.number) === number);
    return known ? { id: provisionalHref(turn, number).slice(1) } : null;
  }

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

  ask(question, followup) {
    return this.host.ask(question, followup);
  }

  followCitation(event) {
    const link = event.target.closest?.("a[data-ref-index]");
    if (!link || !this.root.contains(link) || !link.hasAttribute("href")) return;
    event.preventDefault();
    const card = this.doc.getElementById(link.getAttribute("href").slice(1));
    if (card) {
      card.scrollIntoView?.({ block: "nearest" });
      card.focus();
      card.classList.add("citelab-source-target");
      setTimeout(() => card.classList.remove("citelab-source-target"), 1500);
    }
    const turnView = this.turnViews.get(link.closest("[data-turn-id]")?.dataset.turnId);
    this.root.dispatchEvent(
      new this.doc.defaultView.CustomEvent(CITE_EVENT, {
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

// Redraws happen every frame while a turn streams: leave unchanged DOM alone (a selection
// in a question survives, and nothing is mutated for nothing).
function setIfChanged(node, property, value) {
  if (node[property] !== value) node[property] = value;
}

function setAttributeIfChanged(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

const NO_REPLIES = Object.freeze([]);

function showFormError(form, message) {
  form.error.textContent = message;
  show(form.error, Boolean(message));
}

class TurnView {
  constructor(chat, turnId) {
    const doc = chat.doc;
    this.chat = chat;
    this.turn = null;
    this.element = element(doc, "article", "citelab-turn");
    this.element.dataset.turnId = turnId;
    this.question = element(doc, "p", "citelab-question");
    this.answer = element(doc, "div", "citelab-answer");
    this.pending = element(doc, "p", "citelab-answer-pending", "Looking for an answer…");
    this.pending.setAttribute("aria-hidden", "true");
    this.error = element(doc, "p", "citelab-error");
    this.error.setAttribute("role", "alert");
    this.chips = element(doc, "div", "citelab-chips");
    this.chips.setAttribute("role", "group");
    this.chips.setAttribute("aria-label", "Suggested replies");
    this.feedback = new FeedbackView(chat, this);
    this.element.append(
      this.question,
      this.pending,
      this.answer,
      this.error,
      this.chips,
      this.feedback.element,
    );
    this.stream = new BlockStream({ turn: safeTurnId(turnId) });
    this.blocks = new BlockView(this.answer);
  }

  update(turn, { isLast, settings, relink }) {
    const previous = this.turn;
    this.turn = turn;
    setIfChanged(this.question, "textContent", turn.question);
    setAttributeIfChanged(this.element, "aria-label", `Answer to: ${turn.question}`);
    const open = turn.status === "pending" || turn.status === "streaming";
    setAttributeIfChanged(this.element, "aria-busy", String(open));
    setAttributeIfChanged(this.element, "data-status", turn.status);
    const relinkAll = relink || previous?.references !== turn.references;
    if (previous?.text !== turn.text || !previous) this.renderText(turn, relinkAll);
    else if (relinkAll) this.link(this.answer);
    show(this.pending, open && turn.text === "");
    const error =
      turn.status === "error" ? `Error: ${turn.error?.message || "the answer failed."}` : "";
    setIfChanged(this.error, "textContent", error);
    show(this.error, turn.status === "error");
    this.renderChips(turn, isLast);
    this.feedback.update(turn, settings.feedbackEnabled);
  }

  renderText(turn, relink) {
    const blocks = this.streamed(turn);
    this.drawnPieces = { list: turn.pieces ?? null, count: turn.pieceCount ?? 0 };
    if (relink) {
      this.blocks.update(blocks);
      this.link(this.answer);
    } else {
      this.blocks.update(blocks, (content) => this.link(content));
    }
  }

  // Tokens since the last draw are only new pieces of the same list: give the stream those,
  // not the whole text (reading it costs more the longer the answer; see BlockStream.extend).
  streamed(turn) {
    const drawn = this.drawnPieces;
    if (drawn?.list && turn.pieces === drawn.list && turn.pieceCount >= drawn.count) {
      return this.stream.extend(turn.pieces.slice(drawn.count, turn.pieceCount).join(""));
    }
    return this.stream.update(turn.text);
  }

  link(root) {
    const { turn } = this;
    linkCitations(root, turn.turn_id, (id, number) =>
      this.chat.resolve(id, number, turn.references),
    );
  }

  renderChips(turn, isLast) {
    const replies = turn.status === "done" && isLast ? turn.suggested_replies : NO_REPLIES;
    if (this.shownReplies === replies) return;
    this.shownReplies = replies;
    const buttons = replies
      .filter((reply) => typeof reply?.label === "string" && reply.label.trim())
      .map((reply) => {
        const button = element(this.chat.doc, "button", "citelab-chip", reply.label);
        button.type = "button";
        const message =
          typeof reply.message === "string" && reply.message ? reply.message : reply.label;
        if (message !== reply.label) button.title = message;
        button.addEventListener("click", () => this.chat.ask(message, true));
        return button;
      });
    this.chips.replaceChildren(...buttons);
    show(this.chips, buttons.length > 0);
  }
}

const THUMBS = [
  { value: "up", text: "👍 Helpful", label: "Helpful" },
  { value: "down", text: "👎 Not helpful", label: "Not helpful" },
];

class FeedbackView {
  constructor(chat, turnView) {
    const doc = chat.doc;
    this.chat = chat;
    this.turnView = turnView;
    this.element = element(doc, "div", "citelab-feedback");
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Was this answer helpful?");
    this.buttons = THUMBS.map(({ value, text, label }) => {
      const button = element(doc, "button", "citelab-thumb", text);
      button.type = "button";
      button.dataset.value = value;
      button.setAttribute("aria-label", label);
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", () => this.send(value));
      return button;
    });
    this.comment = questionForm(doc, {
      className: "citelab-feedback-comment",
      label: "Comment (optional)",
      placeholder: "What was good or missing?",
      button: "Send comment",
    });
    this.comment.input.name = "comment";
    this.comment.form.hidden = true;
    this.comment.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(this.value, this.comment.input.value.trim());
    });
    this.status = element(doc, "span", "citelab-feedback-status");
    this.status.setAttribute("role", "status");
    this.element.append(...this.buttons, this.status, this.comment.form);
    this.element.hidden = true;
    this.value = null;
  }

  update(turn, enabled) {
    show(this.element, Boolean(enabled && turn.status === "done" && !turn.no_answer));
    if (turn.feedback?.value && this.value === null) this.press(turn.feedback.value);
  }

  press(value) {
    this.value = value;
    for (const button of this.buttons) {
      button.setAttribute("aria-pressed", String(button.dataset.value === value));
    }
    show(this.comment.form, true);
  }

  async send(value, comment) {
    if (!value) return;
    this.press(value);
    this.status.textContent = "Sending…";
    const result = await this.chat.host.feedback(this.turnView.turn, value, comment || undefined);
    this.status.textContent = result?.error
      ? `Feedback not saved: ${result.error}`
      : "Thanks for your feedback.";
    this.element.dataset.state = result?.error ? "error" : "sent";
  }
}
