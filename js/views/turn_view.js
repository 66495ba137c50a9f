// One turn of the chat: the question, the streamed answer (its blocks redrawn as tokens
// arrive, its citation markers linked to their cards, its cited spans marked once done), the
// error, the suggested-reply chips, the copy buttons, feedback and "Prompt and rounds".
import { hasAnchors, readAnchorsOf } from "../contract/message.js";
import { isOpen } from "../contract/model.js";
import { element, setAttributeIfChanged, setIfChanged, show } from "../dom/nodes.js";
import { AnchorMarking, unmarkCitedSpans } from "../render/anchors.js";
import { BlockView } from "../render/block_view.js";
import { safeTurnId } from "../render/citations.js";
import { BlockStream } from "../render/stream.js";
import { FeedbackView } from "./feedback_view.js";
import { linkCitations } from "./references/links.js";
import { RoundsView } from "./rounds_view.js";
import { TurnActions } from "./turn_actions.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").SuggestedReply} SuggestedReply */
/** @typedef {import("./chat_view.js").ChatView} ChatView */
/** @typedef {import("./chat_view.js").ChatSettings} ChatSettings */

/** @type {readonly SuggestedReply[]} */
const NO_REPLIES = Object.freeze([]);

// A turn shown again (the page's recent conversations) whose answer drew on a document its
// reader may no longer read: the server withholds the answer and its sources.
export const WITHHELD_TEXT =
  "This answer is no longer shown: it drew on a document you may no longer read.";

// Error codes of a turn someone stopped (the page's Stop; the kernel's cancel): not errors.
const STOPPED_CODES = new Set(["stopped", "cancelled"]);

/**
 * Whether a turn ended because someone stopped it.
 * @param {{status: string, error?: {code: string}|null}} turn
 */
export function wasStopped(turn) {
  return turn.status === "error" && STOPPED_CODES.has(turn.error?.code ?? "");
}

export class TurnView {
  /**
   * @param {ChatView} chat
   * @param {string} turnId
   */
  constructor(chat, turnId) {
    const doc = chat.doc;
    this.chat = chat;
    /** @type {Turn|null} */
    this.turn = null;
    this.element = element(doc, "article", "citelab-turn");
    this.element.dataset.turnId = turnId;
    this.question = element(doc, "p", "citelab-question");
    this.answer = element(doc, "div", "citelab-answer");
    this.pending = element(doc, "p", "citelab-answer-pending", "Looking for an answer…");
    this.pending.setAttribute("aria-hidden", "true");
    this.error = element(doc, "p", "citelab-error");
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.stopped = this.buildStopped(doc);
    this.withheld = element(doc, "p", "citelab-withheld", WITHHELD_TEXT);
    this.withheld.hidden = true;
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
      this.withheld,
      this.error,
      this.stopped.element,
      this.chips,
      this.actions.element,
      this.feedback.element,
      this.rounds.element,
    );
    this.stream = new BlockStream({ turn: safeTurnId(turnId) });
    this.blocks = new BlockView(this.answer);
    /** @type {unknown[]|null} */
    this.marked = null; // [text, message, references] the marks were made for
    /** @type {string|undefined} */
    this.linkedTargets = undefined; // what the markers were linked to (ChatView.linkTargets)
    this.stopMarking = () => {};
    /** @type {{list: string[]|null, count: number}|undefined} */
    this.drawnPieces = undefined;
    /** @type {readonly SuggestedReply[]|undefined} */
    this.shownReplies = undefined;
  }

  /**
   * @param {Turn} turn
   * @param {{isLast: boolean, settings: ChatSettings, relink: boolean}} options
   */
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
    const stopped = wasStopped(turn);
    const failed = turn.status === "error" && !stopped;
    const error = failed ? `Error: ${turn.error?.message || "the answer failed."}` : "";
    setIfChanged(this.error, "textContent", error);
    show(this.error, failed);
    this.drawStopped(turn, stopped);
    show(this.withheld, Boolean(turn.withheld));
    this.renderChips(turn, isLast);
    this.actions.update(turn);
    this.feedback.update(turn, settings.feedbackEnabled);
    this.rounds.update(turn.status === "done" ? turn.rounds : null);
  }

  // A stopped turn says so plainly (a status, not an alert) and offers its question again.
  /** @param {Document} doc */
  buildStopped(doc) {
    const box = element(doc, "p", "citelab-stopped");
    box.setAttribute("role", "status");
    box.hidden = true;
    const text = element(doc, "span", "citelab-stopped-text");
    const again = element(doc, "button", "citelab-ask-again", "Ask again");
    again.type = "button";
    again.addEventListener("click", () => {
      const turn = this.turn;
      if (turn) this.chat.ask(turn.question, turn.followup);
    });
    box.append(text, " ", again);
    return { element: box, text, again };
  }

  /**
   * @param {Turn} turn
   * @param {boolean} stopped
   */
  drawStopped(turn, stopped) {
    const text = !stopped
      ? ""
      : turn.text
        ? "Stopped: the answer above is incomplete."
        : "You stopped this question before an answer began.";
    setIfChanged(this.stopped.text, "textContent", text);
    show(this.stopped.element, stopped);
  }

  // Once a turn is done, the spans its anchors cite are marked (as MessageView does), each
  // mark naming the source numbers of the text: pointing at a marker highlights its span.
  // Hundreds of spans take longer than a frame should, so they are marked in slices, one per
  // frame (the chat's `slices`); the hover card highlights the marks a slice adds for the
  // marker it shows. Relinking leaves marks alone; new anchors or references replace them.
  /** @param {Turn} turn */
  markCitedSpans(turn) {
    if (turn.status !== "done") return;
    const key = [turn.text, turn.message, turn.references];
    if (this.marked?.every((part, index) => part === key[index])) return;
    this.clearMarks();
    this.marked = key;
    if (!hasAnchors(turn.message)) return;
    // Reading the anchors (offsets checked against a long text) is the first slice's work,
    // not the turn's end's.
    /** @type {AnchorMarking|null} */
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

  /**
   * @param {Turn} turn
   * @param {boolean} relink
   */
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
  /** @param {Turn} turn */
  streamed(turn) {
    const drawn = this.drawnPieces;
    const count = turn.pieceCount ?? 0;
    if (drawn?.list && turn.pieces === drawn.list && count >= drawn.count) {
      return this.stream.extend(drawn.list.slice(drawn.count, count).join(""));
    }
    return this.stream.update(turn.text);
  }

  /** @param {ParentNode} root */
  link(root) {
    const { turn } = this;
    if (!turn) return;
    linkCitations(root, turn.turn_id, (id, number) =>
      this.chat.resolve(id, number, turn.references),
    );
  }

  /**
   * @param {Turn} turn
   * @param {boolean} isLast
   */
  renderChips(turn, isLast) {
    const replies = turn.status === "done" && isLast ? turn.suggested_replies : NO_REPLIES;
    if (this.shownReplies === replies) return;
    this.shownReplies = replies;
    const buttons = replies
      .filter((reply) => typeof reply?.label === "string" && Boolean(reply.label.trim()))
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
