// The hover/focus card of a citation marker: pointing at `[n]` (or moving the keyboard focus
// onto it) shows the source's number, title, the detail that tells same-title sources apart,
// its domain or URI, badges (restricted; retrieved, not yet cited) and what supports the claim
// (the sentence(s) of the source the marker's claim rests on where known, else the retrieved
// passage), and highlights the span the marker cites. The card is a `role="tooltip"` the link
// names with `aria-describedby` while it shows, so a screen reader reads it with the link. It
// stays while the pointer moves onto it, and Escape dismisses it (WCAG 1.4.13). All text is
// set as text.
import { passageOf, sourceLabel, whereOf } from "../contract/reference.js";
import { element, uniqueId } from "../dom/nodes.js";
import { cardBadges } from "./references/cards.js";

/**
 * What a marker points at: its turn's reference, whether it is only retrieved so far, the
 * number the marker shows, and the sentence(s) of the source its claim rests on (null when
 * not known: the card shows the passage).
 * @typedef {{reference: import("../contract/model.js").Reference, retrieved: boolean,
 *   number: number, quote?: string|null}} Cited
 */

const HIDE_DELAY_MS = 200;
const MARKER = "a[data-ref-index][href]";

export class HoverCard {
  /**
   * @param {HTMLElement} root  the chat root (the card is placed inside it)
   * @param {(link: HTMLAnchorElement) => Cited|null} resolve  what a marker link points at
   */
  constructor(root, resolve) {
    this.root = root;
    this.doc = root.ownerDocument;
    this.resolve = resolve;
    /** @type {HTMLAnchorElement|null} */
    this.link = null;
    /** @type {ReturnType<typeof setTimeout>|null} */
    this.timer = null;
    /** @type {string|undefined} */
    this.shownAnchor = undefined; // the link's data-anchor when the card was filled
    this.card = element(this.doc, "div", "citelab-hovercard");
    this.card.id = uniqueId("citelab-hovercard");
    this.card.setAttribute("role", "tooltip");
    this.card.hidden = true;
    root.append(this.card);
    root.addEventListener("mouseover", (event) => this.pointerOver(event));
    root.addEventListener("mouseout", (event) => this.pointerOut(event));
    root.addEventListener("focusin", (event) => this.focusIn(event));
    root.addEventListener("focusout", (event) => this.focusOut(event));
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.link) {
        event.stopPropagation();
        this.hide();
      }
    });
  }

  /** @param {Event} event */
  pointerOver(event) {
    const target = /** @type {Element|null} */ (event.target);
    if (this.card.contains(target)) {
      this.cancelHide();
      return;
    }
    const link = markerAt(target);
    if (link && this.root.contains(link)) this.show(link);
  }

  /** @param {MouseEvent} event */
  pointerOut(event) {
    const to = /** @type {Node|null} */ (event.relatedTarget);
    if (to && (this.card.contains(to) || (this.link && this.link.contains(to)))) return;
    if (this.link && this.doc.activeElement === this.link) return; // the keyboard holds it
    this.scheduleHide();
  }

  /** @param {Event} event */
  focusIn(event) {
    const link = markerAt(/** @type {Element|null} */ (event.target));
    if (link && this.root.contains(link)) this.show(link);
  }

  /** @param {Event} event */
  focusOut(event) {
    if (this.link && event.target === this.link) this.hide();
  }

  /**
   * Show the card for a marker link (no-op when the marker resolves to no source).
   * @param {HTMLAnchorElement} link
   */
  show(link) {
    this.cancelHide();
    const found = this.resolve(link);
    if (!found) {
      this.hide();
      return;
    }
    if (this.link !== link) this.unlink();
    this.link = link;
    this.shownAnchor = link.dataset.anchor;
    this.fill(found);
    link.setAttribute("aria-describedby", this.card.id);
    this.card.hidden = false;
    this.place(link);
    this.highlight(link, true);
  }

  hide() {
    this.cancelHide();
    this.unlink();
    this.card.hidden = true;
  }

  unlink() {
    if (!this.link) return;
    this.link.removeAttribute("aria-describedby");
    this.highlight(this.link, false);
    this.link = null;
  }

  scheduleHide() {
    this.cancelHide();
    this.timer = setTimeout(() => this.hide(), HIDE_DELAY_MS);
  }

  cancelHide() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** @param {Cited} cited */
  fill({ reference, retrieved, number, quote = null }) {
    const doc = this.doc;
    const head = element(doc, "p", "citelab-hovercard-title");
    head.append(
      element(doc, "span", "citelab-source-number", `[${number}]`),
      " ",
      element(doc, "strong", "", sourceLabel(reference)),
    );
    /** @type {HTMLElement[]} */
    const parts = [head];
    const badges = cardBadges(doc, reference, retrieved);
    if (badges.length) {
      const row = element(doc, "p", "citelab-hovercard-badges");
      badges.forEach((badge, index) => row.append(...(index ? [" ", badge] : [badge])));
      parts.push(row);
    }
    const where = whereOf(reference);
    if (where) parts.push(element(doc, "p", "citelab-hovercard-where", where));
    const support = quote || passageOf(reference);
    if (support) {
      const block = element(doc, "blockquote", "citelab-hovercard-passage", support);
      if (quote) block.classList.add("citelab-hovercard-cited");
      parts.push(block);
    }
    this.card.replaceChildren(...parts);
  }

  // Below the marker, inside the chat's box (the root is the positioning context).
  /** @param {HTMLAnchorElement} link */
  place(link) {
    const rootBox = this.root.getBoundingClientRect();
    const box = link.getBoundingClientRect();
    const width = Math.min(360, Math.max(200, rootBox.width - 16));
    const left = Math.max(0, Math.min(box.left - rootBox.left, rootBox.width - width));
    this.card.style.width = `${width}px`;
    this.card.style.left = `${left}px`;
    this.card.style.top = `${box.bottom - rootBox.top + 4}px`;
  }

  /**
   * Marks made while the card shows (spans marked in slices): highlight the ones it cites.
   * @param {HTMLElement[]} marks
   */
  highlightAdded(marks) {
    if (!this.link) return;
    // The marking tells each marker its claim's anchor (data-anchor): the card shown for it
    // before then showed the passage; now it can show the sentence.
    if (this.link.dataset.anchor !== this.shownAnchor) {
      this.shownAnchor = this.link.dataset.anchor;
      const found = this.resolve(this.link);
      if (found) this.fill(found);
    }
    if (!marks.length) return;
    const turn = this.link.closest("[data-turn-id]");
    const number = this.link.dataset.refIndex ?? "";
    for (const mark of marks) {
      const cites = mark.dataset.sources?.split(" ").includes(number);
      if (cites && turn?.contains(mark)) mark.classList.add("citelab-cited-active");
    }
  }

  // The span the marker cites (marks of its turn that name the number), and its card.
  /**
   * @param {HTMLAnchorElement} link
   * @param {boolean} on
   */
  highlight(link, on) {
    const turn = link.closest("[data-turn-id]");
    const number = link.dataset.refIndex;
    for (const mark of turn?.querySelectorAll(`mark[data-sources~="${number}"]`) ?? []) {
      mark.classList.toggle("citelab-cited-active", on);
    }
    const href = link.getAttribute("href");
    const card = href?.startsWith("#") ? this.doc.getElementById(href.slice(1)) : null;
    card?.classList.toggle("citelab-source-hover", on);
  }
}

/**
 * The marker link at (or around) an event's target, if any.
 * @param {Element|null} target
 * @returns {HTMLAnchorElement|null}
 */
function markerAt(target) {
  return /** @type {HTMLAnchorElement|null} */ (target?.closest?.(MARKER) ?? null);
}
