// The shared references section: one list for every turn of a conversation. Each card and
// placeholder carries its turn (data-ref-turn); re-rendering a turn touches only its own
// elements. One card per source across turns: a source seen again (same referenceKey) gets
// no second card, and its citation number points at the earlier card.
import { referenceKey } from "../../contract/reference.js";
import { uniqueId } from "../../dom/nodes.js";
import { safeTurnId } from "../../render/citations.js";
import { buildCard, cardLook } from "./cards.js";

/** @typedef {import("../../contract/model.js").Reference} Reference */

const TEXT_NODE = 3;

export class ReferencesSection {
  /**
   * @param {HTMLElement} root  an element to fill (a heading and a list)
   * @param {{heading?: string, onDocument?: ((reference: Reference) => void)|null}} [options]
   *   `onDocument`: opens the local document view of an `entity:` source; without it a
   *   card has no "Read" button.
   */
  constructor(root, { heading = "Sources", onDocument = null } = {}) {
    const doc = root.ownerDocument;
    this.root = root;
    this.onDocument = onDocument;
    this.idPrefix = uniqueId("citelab-src");
    root.classList.add("citelab-sources");
    const title = doc.createElement("h3");
    title.className = "citelab-sources-heading";
    title.id = `${this.idPrefix}-heading`;
    title.textContent = heading;
    // The numbers shown are the ones the text uses (conversation-wide, or per turn under
    // the "turn" ablation), not the list's own count: each card shows its number itself.
    this.list = doc.createElement("ol");
    this.list.className = "citelab-sources-list";
    this.list.setAttribute("aria-labelledby", title.id);
    root.replaceChildren(title, this.list);
    /** @type {Map<string, HTMLElement>} */
    this.seen = new Map(); // referenceKey → card element (first turn that showed it)
    /** @type {Map<string, HTMLElement>} */
    this.targets = new Map(); // "turn number" → card element
    /** @type {WeakMap<Element, {reference: Reference, retrieved: boolean}>} */
    this.details = new WeakMap(); // card → {reference, retrieved}
    /** @type {WeakMap<Element, string>} */
    this.looks = new WeakMap(); // card → what it shows (cardLook)
    this.updateVisibility();
  }

  /** A genuinely new question: nothing of the old conversation stays. */
  clear() {
    this.list.replaceChildren();
    this.seen.clear();
    this.targets.clear();
    this.updateVisibility();
  }

  /**
   * Remove one turn's cards and placeholders (and forget the sources it introduced); the
   * cards in `keep` stay in the list (showReferences reuses them).
   * @param {string} turnId
   * @param {Set<Element>|null} [keep]
   */
  removeTurn(turnId, keep = null) {
    const turn = safeTurnId(turnId);
    for (const element of this.turnElements(turn)) if (!keep?.has(element)) element.remove();
    for (const [key, card] of this.seen) if (card.dataset.refTurn === turn) this.seen.delete(key);
    for (const key of this.targets.keys()) if (key.startsWith(`${turn} `)) this.targets.delete(key);
    for (const card of this.list.querySelectorAll(`[data-alias-turn="${turn}"]`)) card.remove();
    this.updateVisibility();
  }

  /**
   * Show a placeholder while the turn's sources are not known yet.
   * @param {string} turnId
   */
  showPending(turnId) {
    this.removeTurn(turnId);
    const item = this.root.ownerDocument.createElement("li");
    item.className = "citelab-source-pending";
    item.dataset.refTurn = safeTurnId(turnId);
    item.setAttribute("aria-busy", "true");
    item.textContent = "Looking for sources…";
    this.list.append(item);
    this.updateVisibility();
  }

  /**
   * Show (or replace) one turn's references. `retrieved`: the turn is still streaming, so
   * these are the retrieved sources, not the cited ones (dimmed and labelled until `done`).
   * `answer`: the turn's position in the conversation (1-based), named when a number would
   * otherwise be ambiguous (per-turn numbering repeats numbers).
   * @param {string} turnId
   * @param {Reference[]} references
   * @param {{retrieved?: boolean, answer?: number|null}} [options]
   */
  showReferences(turnId, references, { retrieved = false, answer = null } = {}) {
    const turn = safeTurnId(turnId);
    // The turn's cards as drawn, by what they show: a card that would be built the same
    // again is kept (a turn's end redraws its list; rebuilding every card cost ~6 ms).
    /** @type {Map<string, HTMLElement>} */
    const drawn = new Map();
    for (const element of this.turnElements(turn)) {
      const look = this.looks.get(element);
      if (look !== undefined) drawn.set(look, element);
    }
    this.removeTurn(turnId, new Set(drawn.values()));
    /** @type {HTMLElement[]} */
    const cards = [];
    /** @type {Set<number>} */
    const numbers = new Set(); // the numbers this turn's own cards show so far
    for (const reference of references) {
      const number = Number(reference.number);
      const key = referenceKey(reference);
      const earlier = key === null ? undefined : this.seen.get(key);
      if (earlier) {
        this.targets.set(`${turn} ${number}`, earlier);
        if (!retrieved && earlier.dataset.state === "retrieved") this.markCited(earlier);
        if (Number(earlier.dataset.number) !== number) this.addAlias(earlier, turn, number, answer);
        continue;
      }
      const qualify = answer !== null && (numbers.has(number) || this.numberShown(number, turn));
      const options = { retrieved, answer: qualify ? answer : null };
      const look = cardLook(reference, number, options.answer);
      let card = drawn.get(look);
      // A kept card can go from retrieved to cited, not back.
      if (card && retrieved && card.dataset.state !== "retrieved") card = undefined;
      if (card) {
        drawn.delete(look);
        if (!retrieved && card.dataset.state === "retrieved") this.markCited(card);
        this.details.set(card, { reference, retrieved: card.dataset.state === "retrieved" });
      } else {
        card = this.buildCard(reference, turn, number, options);
        this.looks.set(card, look);
      }
      cards.push(card);
      numbers.add(number);
      this.targets.set(`${turn} ${number}`, card);
      if (key !== null) this.seen.set(key, card);
    }
    for (const unused of drawn.values()) unused.remove();
    // The turn's cards end the list, in order; a kept card already in its place stays put.
    /** @type {HTMLElement|null} */
    let next = null;
    for (let index = cards.length - 1; index >= 0; index--) {
      const card = cards[index];
      /** @type {Element|null} */
      const placed = next === null ? this.list.lastElementChild : next.previousElementSibling;
      if (placed !== card) this.list.insertBefore(card, next);
      next = card;
    }
    this.updateVisibility();
  }

  /**
   * What citation links of `turnId` are given, as one string: each number with its card's
   * id and title. Links drawn while it stays the same need no relinking.
   * @param {string} turnId
   */
  linkTargets(turnId) {
    const prefix = `${safeTurnId(turnId)} `;
    const parts = [];
    for (const [key, card] of this.targets) {
      if (!key.startsWith(prefix)) continue;
      const title = card.querySelector(".citelab-source-title")?.textContent ?? "";
      parts.push(`${key.slice(prefix.length)}\u0000${card.id}\u0000${title}`);
    }
    return parts.join("\u0001");
  }

  /**
   * The card citation `[number]` of `turnId` points at, if any.
   * @param {string} turnId
   * @param {number} number
   */
  target(turnId, number) {
    return this.targets.get(`${safeTurnId(turnId)} ${number}`) ?? null;
  }

  /**
   * What a card shows: `{reference, retrieved}` (for the hover card), or null.
   * @param {Element} card
   */
  detailsOf(card) {
    return this.details.get(card) ?? null;
  }

  /**
   * @param {string} turn
   * @returns {HTMLElement[]}
   */
  turnElements(turn) {
    return this.items().filter((element) => element.dataset.refTurn === turn);
  }

  /** The list's items (cards, placeholders). */
  items() {
    return /** @type {HTMLElement[]} */ ([...this.list.children]);
  }

  /**
   * Whether a card of another turn shows `number`.
   * @param {number} number
   * @param {string} turn
   */
  numberShown(number, turn) {
    const shown = String(number);
    return this.items().some(
      (card) => card.dataset.number === shown && card.dataset.refTurn !== turn,
    );
  }

  /** @param {HTMLElement} card */
  markCited(card) {
    card.dataset.state = "cited";
    card.classList.remove("citelab-source-retrieved");
    const state = card.querySelector(".citelab-source-state");
    // The badge and the space before it, as a card built cited has neither.
    const before = state?.previousSibling;
    if (before?.nodeType === TEXT_NODE && /** @type {Text} */ (before).data === " ") {
      before.remove();
    }
    state?.remove();
    const details = this.details.get(card);
    if (details) details.retrieved = false;
  }

  // A source cited again under another number (per-turn numbering): the card says so, so
  // the list never shows a number that disagrees with the text it belongs to.
  /**
   * @param {HTMLElement} card
   * @param {string} turn
   * @param {number} number
   * @param {number|null} answer
   */
  addAlias(card, turn, number, answer) {
    const doc = this.root.ownerDocument;
    const alias = doc.createElement("span");
    alias.className = "citelab-source-alias";
    alias.dataset.aliasTurn = turn;
    alias.textContent = answer === null ? `also [${number}]` : `also [${number}] in answer ${answer}`;
    card.querySelector(".citelab-source-number")?.after(alias);
  }

  /**
   * @param {Reference} reference
   * @param {string} turn
   * @param {number} number
   * @param {{retrieved: boolean, answer: number|null}} options
   */
  buildCard(reference, turn, number, { retrieved, answer }) {
    const card = buildCard(this.root.ownerDocument, reference, {
      id: `${this.idPrefix}-${turn}-${number}`,
      turn,
      number,
      retrieved,
      answer,
      onDocument: this.onDocument,
    });
    this.details.set(card, { reference, retrieved });
    return card;
  }

  updateVisibility() {
    this.root.hidden = this.list.children.length === 0;
  }
}
