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
import { BlockView } from "./block_view.js";
import { DocumentView } from "./document_view.js";
import { HoverCard } from "./hover_card.js";
import { iconButton } from "./icons.js";
import {
  AnchorMarking,
  CITATIONS_KEY,
  readAnchorsOf,
  unmarkCitedSpans,
} from "./message_view.js";
import { RoundsView } from "./rounds_view.js";
import { provisionalHref, safeTurnId } from "./citations.js";
import { element, frameScheduler, frameSlices, questionForm, show } from "./dom.js";
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
   * @param {{schedule?: (draw: () => void) => () => void, sections?: HTMLElement[],
   *   slices?: (work: (hasTime: () => boolean) => boolean) => () => void}} options
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
    this.documents = this.host.document ? new DocumentView(root, this.host) : null;
    const onDocument = this.documents ? (reference) => this.documents.open(reference) : null;
    this.sections = sectionRoots.map((node) => new ReferencesSection(node, { onDocument }));
    this.controllers = this.sections.map((section) => new ReferencesController(section));
    root.addEventListener("click", (event) => this.followCitation(event));
    this.boxes = new QuestionBoxes(root, this.store, { ask: ask.input, followup: followup.input });
    this.hoverCard = new HoverCard(root, (link) => this.citedBy(link));
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

  /** What a marker link cites: `{reference, retrieved, number}` from its turn, or null. */
  citedBy(link) {
    const turnView = this.turnViews.get(link.closest("[data-turn-id]")?.dataset.turnId);
    const turn = turnView?.turn;
    const number = Number(link.dataset.refIndex);
    const reference = turn?.references?.find((candidate) => Number(candidate.number) === number);
    if (!reference) return null;
    return { reference, retrieved: isOpen(turn.status), number };
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

  // The agent's starter questions, offered until the first question is asked.
  drawStarters(starters) {
    const list = Array.isArray(starters)
      ? starters.filter((text) => typeof text === "string" && text.trim())
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
  drawDisconnected(message) {
    // Connected before and now: nothing to do (this runs on every streamed frame).
    if (!message && !this.wasDisconnected) return;
    this.wasDisconnected = Boolean(message);
    setIfChanged(this.notice, "textContent", message ?? "");
    show(this.notice, Boolean(message));
    this.root.classList.toggle("citelab-disconnected", Boolean(message));
    const controls = this.root.querySelectorAll(
      ".citelab-ask input, .citelab-ask button, .citelab-followup input, " +
        ".citelab-followup button, .citelab-controls button, .citelab-chip, .citelab-thumb",
    );
    for (const control of controls) setIfChanged(control, "disabled", Boolean(message));
  }

  /** The element citation [number] of a turn points at (the first Sources list's card). */
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
   */
  linkTargets(turn) {
    const section = this.sections[0];
    if (section) return section.linkTargets(turn.turn_id);
    const numbers = (turn.references ?? []).map((reference) => Number(reference.number));
    return [...new Set(numbers)].sort((a, b) => a - b).join(" ");
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

// Whether a message's text block has any anchors at all (read them only then).
function hasAnchors(message) {
  const blocks = Array.isArray(message?.content) ? message.content : [];
  return blocks.some((block) => block?._meta?.[CITATIONS_KEY]?.length > 0);
}

function isOpen(status) {
  return status === "pending" || status === "streaming";
}

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
    this.actions = new TurnActions(chat, this);
    this.rounds = new RoundsView(doc);
    this.element.append(
      this.question,
      this.pending,
      this.answer,
      this.error,
      this.chips,
      this.actions.element,
      this.feedback.element,
      this.rounds.element,
    );
    this.stream = new BlockStream({ turn: safeTurnId(turnId) });
    this.blocks = new BlockView(this.answer);
    this.marked = null; // [text, message, references] the marks were made for
    this.linkedTargets = undefined; // what the markers were linked to (ChatView.linkTargets)
    this.stopMarking = () => {};
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
    const redrawn = previous?.text !== turn.text || !previous;
    if (redrawn && this.marked) this.clearMarks(); // the text under the marks changes
    // Relinking walks every marker of the turn: only when what they link to changed.
    const targets = relinkAll ? this.chat.linkTargets(turn) : this.linkedTargets;
    const relinkNow = targets !== this.linkedTargets;
    this.linkedTargets = targets;
    if (redrawn) this.renderText(turn, relinkNow);
    else if (relinkNow) this.link(this.answer);
    this.markCitedSpans(turn);
    show(this.pending, open && turn.text === "");
    const error =
      turn.status === "error" ? `Error: ${turn.error?.message || "the answer failed."}` : "";
    setIfChanged(this.error, "textContent", error);
    show(this.error, turn.status === "error");
    this.renderChips(turn, isLast);
    this.actions.update(turn);
    this.feedback.update(turn, settings.feedbackEnabled);
    this.rounds.update(turn.status === "done" ? turn.rounds : null);
  }

  // Once a turn is done, the spans its anchors cite are marked (as MessageView does), each
  // mark naming the source numbers of the text: pointing at a marker highlights its span.
  // Hundreds of spans take longer than a frame should, so they are marked in slices, one per
  // frame (the chat's `slices`); the hover card highlights the marks a slice adds for the
  // marker it shows. Relinking leaves marks alone; new anchors or references replace them.
  markCitedSpans(turn) {
    if (turn.status !== "done") return;
    const key = [turn.text, turn.message, turn.references];
    if (this.marked?.every((part, index) => part === key[index])) return;
    this.clearMarks();
    this.marked = key;
    if (!hasAnchors(turn.message)) return;
    // Reading the anchors (offsets checked against a long text) is the first slice's work,
    // not the turn's end's.
    let marking = null;
    this.stopMarking = this.chat.slices((hasTime) => {
      marking ??= new AnchorMarking(
        this.answer,
        turn.text,
        readAnchorsOf(turn.message, turn.text, turn.references),
        null,
      );
      this.chat.hoverCard.highlightAdded(marking.step(hasTime));
      if (marking.done) this.stopMarking = () => {};
      return marking.done;
    });
  }

  // No marks, none to come (before the text is redrawn or marked for other anchors).
  clearMarks() {
    this.stopMarking();
    this.stopMarking = () => {};
    this.marked = null;
    unmarkCitedSpans(this.answer);
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
  { value: "up", icon: "thumbUp", text: "Helpful" },
  { value: "down", icon: "thumbDown", text: "Not helpful" },
];

const COPIED_MS = 2000;

// Copy the answer as Markdown (its text, markers as written) or as JSON (the AnswerMessage:
// MCP content blocks with `_meta`), for a done turn.
class TurnActions {
  constructor(chat, turnView) {
    const doc = chat.doc;
    this.chat = chat;
    this.turnView = turnView;
    this.element = element(doc, "div", "citelab-turn-actions");
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Copy the answer");
    this.markdown = iconButton(doc, "copy", "Copy Markdown", "citelab-copy-markdown");
    this.json = iconButton(doc, "copy", "Copy JSON", "citelab-copy-json");
    this.status = element(doc, "span", "citelab-copy-status");
    this.status.setAttribute("role", "status");
    this.markdown.addEventListener("click", () => this.copy("Markdown", markdownOf));
    this.json.addEventListener("click", () => this.copy("JSON", jsonOf));
    this.element.append(this.markdown, this.json, this.status);
    this.element.hidden = true;
  }

  update(turn) {
    show(this.element, turn.status === "done");
    show(this.json, Boolean(turn.message));
  }

  async copy(what, format) {
    const text = format(this.turnView.turn);
    try {
      await (this.chat.host.copy ? this.chat.host.copy(text) : clipboardWrite(this.chat.doc, text));
      this.status.textContent = `Copied as ${what}.`;
      this.status.dataset.state = "copied";
    } catch (error) {
      this.status.textContent = `Could not copy: ${error?.message || "the clipboard refused."}`;
      this.status.dataset.state = "error";
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.status.textContent = "";
    }, COPIED_MS);
  }
}

function markdownOf(turn) {
  return turn.text;
}

function jsonOf(turn) {
  return JSON.stringify(turn.message, null, 2);
}

async function clipboardWrite(doc, text) {
  const clipboard = doc.defaultView?.navigator?.clipboard;
  if (!clipboard?.writeText) throw new Error("this browser gives no clipboard access here.");
  await clipboard.writeText(text);
}

class FeedbackView {
  constructor(chat, turnView) {
    const doc = chat.doc;
    this.chat = chat;
    this.turnView = turnView;
    this.element = element(doc, "div", "citelab-feedback");
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Was this answer helpful?");
    this.buttons = THUMBS.map(({ value, icon: name, text }) => {
      const button = iconButton(doc, name, text, "citelab-thumb");
      button.dataset.value = value;
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
