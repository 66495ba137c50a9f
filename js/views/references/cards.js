// One source card (an item of the Sources list) and the pieces it shares with the hover
// card and the message view: the title link, the badges, where the source lives. Every
// value shown is set as text; every link opens in a new tab without a handle on this page.
import {
  detailOf,
  isDeadUrl,
  isEntityUri,
  passageOf,
  referenceHref,
  sourceLabel,
  whereOf,
} from "../../contract/reference.js";
import { icon, iconButton } from "../../dom/icons.js";
import { element } from "../../dom/nodes.js";

/** @typedef {import("../../contract/model.js").Reference} Reference */

const LINK_REL = "noopener noreferrer";
const LANGCODE = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;

/**
 * Open every link inside `root` in a new tab, without giving the new page a handle on us.
 * @param {ParentNode} root
 */
export function openLinksInNewTab(root) {
  for (const link of root.querySelectorAll("a[href]")) {
    link.setAttribute("target", "_blank");
    link.setAttribute("rel", LINK_REL);
  }
}

/**
 * The title of a source: a link when it has a safe URL, plain text otherwise.
 * @param {Document} doc
 * @param {{title?: unknown, name?: unknown, uri?: unknown, url?: unknown}} reference
 */
export function sourceTitle(doc, reference) {
  const href = referenceHref(reference);
  const node = element(doc, href ? "a" : "span", "citelab-source-title", sourceLabel(reference));
  if (href) node.setAttribute("href", href);
  return node;
}

/**
 * The badges of a card or hover card: detail, restricted, retrieved-not-cited, language.
 * @param {Document} doc
 * @param {Partial<Reference>} reference
 * @param {boolean} retrieved
 * @returns {HTMLElement[]}
 */
export function cardBadges(doc, reference, retrieved) {
  const parts = [];
  const detail = detailOf(reference);
  if (detail) parts.push(element(doc, "span", "citelab-source-detail", detail));
  if (reference.restricted === true) {
    const badge = element(doc, "span", "citelab-badge citelab-badge-restricted");
    badge.title = "Access rules apply: not everyone can read this source";
    badge.append(icon(doc, "lock"), element(doc, "span", "", "Restricted"));
    parts.push(badge);
  }
  if (retrieved) {
    parts.push(element(doc, "span", "citelab-badge citelab-source-state", "Retrieved, not yet cited"));
  }
  if (typeof reference.langcode === "string" && LANGCODE.test(reference.langcode)) {
    parts.push(element(doc, "span", "citelab-source-lang", reference.langcode));
  }
  return parts;
}

/**
 * Where a source lives (see whereOf), as an element, or null.
 * @param {Document} doc
 * @param {Partial<Reference>} reference
 */
function sourceWhere(doc, reference) {
  const where = whereOf(reference);
  return where ? element(doc, "span", "citelab-source-where", where) : null;
}

/**
 * @typedef {object} CardOptions
 * @property {string} id          the card's element id
 * @property {string} turn        the turn that introduced it (safeTurnId)
 * @property {number} number      the number the text uses
 * @property {boolean} retrieved  retrieved, not yet cited (the turn still streams)
 * @property {number|null} answer the turn's position, named when the number is ambiguous
 * @property {((reference: Reference) => void)|null} onDocument  the Read button's action
 */

/**
 * A source card: `[n]`, the title (a link when safe), badges, where it lives, a Read button
 * for `entity:` sources when there is a document view, and the passage.
 * @param {Document} doc
 * @param {Reference} reference
 * @param {CardOptions} options
 */
export function buildCard(doc, reference, { id, turn, number, retrieved, answer, onDocument }) {
  const card = element(
    doc,
    "li",
    retrieved ? "citelab-source citelab-source-retrieved" : "citelab-source",
  );
  card.id = id;
  card.tabIndex = -1; // focusable when a citation link is followed
  card.dataset.refTurn = turn;
  card.dataset.refIndex = String(number);
  card.dataset.number = String(number);
  card.dataset.state = retrieved ? "retrieved" : "cited";
  card.value = Number.isFinite(number) ? number : 0;
  const badge = element(
    doc,
    "span",
    "citelab-source-number",
    answer === null ? `[${number}]` : `[${number}] (answer ${answer})`,
  );
  // With a local document view, an entity's page on a never-resolving host is no link:
  // its Read button shows the document instead.
  const local = onDocument !== null && isEntityUri(reference.uri);
  const label = sourceLabel(reference);
  const dead = local && isDeadUrl(referenceHref(reference));
  card.append(badge, " ", sourceTitle(doc, dead ? { title: label } : { ...reference, title: label }));
  for (const part of cardBadges(doc, reference, retrieved)) card.append(" ", part);
  const where = sourceWhere(doc, reference);
  if (where) card.append(" ", where);
  if (local) {
    const read = iconButton(doc, "document", "Read", "citelab-source-read");
    read.setAttribute("aria-label", `Read the document: ${label}`);
    read.addEventListener("click", () => onDocument(reference));
    card.append(" ", read);
  }
  const passage = passageOf(reference);
  if (passage) card.append(element(doc, "p", "citelab-source-snippet", passage));
  openLinksInNewTab(card);
  return card;
}

/**
 * Everything a card is built from but its turn and state (the section's own options fixed):
 * a card that would be built the same again is kept.
 * @param {Reference} reference
 * @param {number} number
 * @param {number|null} answer
 */
export function cardLook(reference, number, answer) {
  return JSON.stringify([number, answer, reference]);
}
