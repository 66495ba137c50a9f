// The shared references section: one list for every turn of a conversation. Each card and
// placeholder carries its turn (data-ref-turn); re-rendering a turn touches only its own
// elements. One card per source across turns: a source seen again (same referenceKey) gets
// no second card, and its citation number points at the earlier card.
import { safeTurnId } from "./citations.js";
import { uniqueId } from "./dom.js";
import { icon, iconButton } from "./icons.js";
import { isAbsoluteAllowedUrl, isAllowedUrl, isFragmentUrl } from "./urls.js";

const LINK_REL = "noopener noreferrer";
const TEXT_NODE = 3;

/** Fired (bubbling, on the chat) when a citation link is followed: detail {turnId, number,
 * conversationId}. Sources panels listen on the document and show the cited card. */
export const CITE_EVENT = "citelab:cite";
const LANGCODE = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;

/**
 * Identity of a source across turns: entity type + id, else URL, else label; null (never
 * matched) when it has none. Entity ids come first: two entities can share a URL or title.
 */
export function referenceKey(reference) {
  const { entity_type: type, entity_id: id, url, title } = reference ?? {};
  if (present(type) && present(id)) return `entity\u0000${type}\u0000${id}`;
  if (present(url)) return `url\u0000${url}`;
  if (present(title)) return `label\u0000${title}`;
  return null;
}

function present(value) {
  return (typeof value === "string" && value !== "") || typeof value === "number";
}

/** The URL a card links to, or null when the reference has none that is safe to follow. */
export function referenceHref(reference) {
  // The web URL may be relative (a page of this site); the URI only as an absolute URL.
  const url = reference?.url;
  if (typeof url === "string" && url.trim() && isAllowedUrl(url) && !isFragmentUrl(url)) return url;
  const uri = reference?.uri;
  return typeof uri === "string" && isAbsoluteAllowedUrl(uri) ? uri : null;
}

/** Open every link inside `root` in a new tab, without giving the new page a handle on us. */
export function openLinksInNewTab(root) {
  for (const link of root.querySelectorAll("a[href]")) {
    link.setAttribute("target", "_blank");
    link.setAttribute("rel", LINK_REL);
  }
}

export class ReferencesSection {
  /**
   * @param {HTMLElement} root  an element to fill (a heading and a list)
   * @param {{heading?: string, onDocument?: (reference: object) => void}} options
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
    this.seen = new Map(); // referenceKey → card element (first turn that showed it)
    this.targets = new Map(); // "turn number" → card element
    this.details = new WeakMap(); // card → {reference, retrieved}
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
   */
  removeTurn(turnId, keep = null) {
    const turn = safeTurnId(turnId);
    for (const element of this.turnElements(turn)) if (!keep?.has(element)) element.remove();
    for (const [key, card] of this.seen) if (card.dataset.refTurn === turn) this.seen.delete(key);
    for (const key of this.targets.keys()) if (key.startsWith(`${turn} `)) this.targets.delete(key);
    for (const card of this.list.querySelectorAll(`[data-alias-turn="${turn}"]`)) card.remove();
    this.updateVisibility();
  }

  /** Show a placeholder while the turn's sources are not known yet. */
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
   */
  showReferences(turnId, references, { retrieved = false, answer = null } = {}) {
    const turn = safeTurnId(turnId);
    // The turn's cards as drawn, by what they show: a card that would be built the same
    // again is kept (a turn's end redraws its list; rebuilding every card cost ~6 ms).
    const drawn = new Map();
    for (const element of this.turnElements(turn)) {
      const look = this.looks.get(element);
      if (look !== undefined) drawn.set(look, element);
    }
    this.removeTurn(turnId, new Set(drawn.values()));
    const cards = [];
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
    let next = null;
    for (let index = cards.length - 1; index >= 0; index--) {
      const card = cards[index];
      const placed = next === null ? this.list.lastElementChild : next.previousElementSibling;
      if (placed !== card) this.list.insertBefore(card, next);
      next = card;
    }
    this.updateVisibility();
  }

  /**
   * What citation links of `turnId` are given, as one string: each number with its card's
   * id and title. Links drawn while it stays the same need no relinking.
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

  /** The card citation `[number]` of `turnId` points at, if any. */
  target(turnId, number) {
    return this.targets.get(`${safeTurnId(turnId)} ${number}`) ?? null;
  }

  /** What a card shows: `{reference, retrieved}` (for the hover card), or null. */
  detailsOf(card) {
    return this.details.get(card) ?? null;
  }

  turnElements(turn) {
    return [...this.list.children].filter((element) => element.dataset.refTurn === turn);
  }

  // Whether a card of another turn shows `number`.
  numberShown(number, turn) {
    const shown = String(number);
    return [...this.list.children].some(
      (card) => card.dataset.number === shown && card.dataset.refTurn !== turn,
    );
  }

  markCited(card) {
    card.dataset.state = "cited";
    card.classList.remove("citelab-source-retrieved");
    const state = card.querySelector(".citelab-source-state");
    // The badge and the space before it, as a card built cited has neither.
    if (state?.previousSibling?.nodeType === TEXT_NODE && state.previousSibling.data === " ") {
      state.previousSibling.remove();
    }
    state?.remove();
    const details = this.details.get(card);
    if (details) details.retrieved = false;
  }

  // A source cited again under another number (per-turn numbering): the card says so, so
  // the list never shows a number that disagrees with the text it belongs to.
  addAlias(card, turn, number, answer) {
    const doc = this.root.ownerDocument;
    const alias = doc.createElement("span");
    alias.className = "citelab-source-alias";
    alias.dataset.aliasTurn = turn;
    alias.textContent = answer === null ? `also [${number}]` : `also [${number}] in answer ${answer}`;
    card.querySelector(".citelab-source-number")?.after(alias);
  }

  buildCard(reference, turn, number, { retrieved, answer }) {
    const doc = this.root.ownerDocument;
    const card = doc.createElement("li");
    card.className = retrieved ? "citelab-source citelab-source-retrieved" : "citelab-source";
    card.id = `${this.idPrefix}-${turn}-${number}`;
    card.tabIndex = -1; // focusable when a citation link is followed
    card.dataset.refTurn = turn;
    card.dataset.refIndex = String(number);
    card.dataset.number = String(number);
    card.dataset.state = retrieved ? "retrieved" : "cited";
    card.value = Number.isFinite(number) ? number : 0;
    const badge = doc.createElement("span");
    badge.className = "citelab-source-number";
    badge.textContent = answer === null ? `[${number}]` : `[${number}] (answer ${answer})`;
    // With a local document view, an entity's page on a never-resolving host is no link:
    // its Read button shows the document instead.
    const local = this.onDocument !== null && isEntityUri(reference.uri);
    const shown = local && isDeadUrl(referenceHref(reference)) ? { ...reference, url: null, uri: null } : reference;
    card.append(badge, " ", sourceTitle(doc, { ...shown, title: labelOf(reference) }));
    for (const part of cardBadges(doc, reference, retrieved)) card.append(" ", part);
    const where = sourceWhere(doc, reference);
    if (where) card.append(" ", where);
    if (local) {
      const read = iconButton(doc, "document", "Read", "citelab-source-read");
      read.setAttribute("aria-label", `Read the document: ${labelOf(reference)}`);
      read.addEventListener("click", () => this.onDocument(reference));
      card.append(" ", read);
    }
    const passage = passageOf(reference);
    if (passage) {
      const snippet = doc.createElement("p");
      snippet.className = "citelab-source-snippet";
      snippet.textContent = passage;
      card.append(snippet);
    }
    openLinksInNewTab(card);
    this.details.set(card, { reference, retrieved });
    return card;
  }

  updateVisibility() {
    this.root.hidden = this.list.children.length === 0;
  }
}

/** The badges of a card or hover card: detail, restricted, retrieved-not-cited, language. */
export function cardBadges(doc, reference, retrieved) {
  const parts = [];
  if (typeof reference.detail === "string" && reference.detail.trim()) {
    const detail = doc.createElement("span");
    detail.className = "citelab-source-detail";
    detail.textContent = reference.detail;
    parts.push(detail);
  }
  if (reference.restricted === true) {
    const badge = doc.createElement("span");
    badge.className = "citelab-badge citelab-badge-restricted";
    badge.title = "Access rules apply: not everyone can read this source";
    const text = doc.createElement("span");
    text.textContent = "Restricted";
    badge.append(icon(doc, "lock"), text);
    parts.push(badge);
  }
  if (retrieved) {
    const state = doc.createElement("span");
    state.className = "citelab-badge citelab-source-state";
    state.textContent = "Retrieved, not yet cited";
    parts.push(state);
  }
  if (typeof reference.langcode === "string" && LANGCODE.test(reference.langcode)) {
    const lang = doc.createElement("span");
    lang.className = "citelab-source-lang";
    lang.textContent = reference.langcode;
    parts.push(lang);
  }
  return parts;
}

// Everything a card is built from but its turn and state (the section's own options fixed).
function cardLook(reference, number, answer) {
  return JSON.stringify([number, answer, reference]);
}

/** The passage a card shows: the supporting passage when known, else the snippet. */
export function passageOf(reference) {
  for (const value of [reference?.passage, reference?.snippet]) {
    if (typeof value === "string" && value.trim()) return value;
  }
  return "";
}

function labelOf(reference) {
  return (
    [reference.title, reference.name, reference.uri].find(
      (value) => typeof value === "string" && value.trim(),
    ) ?? "Untitled source"
  );
}

export function isEntityUri(uri) {
  return typeof uri === "string" && /^entity:[^/\s]+\/\S+$/.test(uri);
}

// Top-level domains reserved as never resolving (RFC 2606, RFC 6761): a link there is dead
// (the demo corpora's pages live under `.example`).
const RESERVED_HOST = /\.(example|test|invalid)\.?$/i;

/** True when `url` is absolute http(s) on a reserved, never-answering host. */
export function isDeadUrl(url) {
  try {
    const parsed = new URL(url);
    return /^https?:$/.test(parsed.protocol) && RESERVED_HOST.test(parsed.hostname);
  } catch {
    return false;
  }
}

/** Where a source lives, as text: the domain of its web URL, else its URI. */
export function whereOf(reference) {
  const href = referenceHref(reference);
  if (href) {
    try {
      const parsed = new URL(href);
      if (parsed.hostname) return parsed.hostname;
    } catch {
      // relative: fall through to the uri
    }
  }
  const uri = reference?.uri;
  return typeof uri === "string" && uri.trim() ? uri : "";
}

function sourceWhere(doc, reference) {
  const where = whereOf(reference);
  if (!where) return null;
  const node = doc.createElement("span");
  node.className = "citelab-source-where";
  node.textContent = where;
  return node;
}

/** The title of a source: a link when it has a safe URL, plain text otherwise. */
export function sourceTitle(doc, reference) {
  const label = [reference.title, reference.name, reference.uri].find(
    (value) => typeof value === "string" && value.trim(),
  );
  const href = referenceHref(reference);
  const element = doc.createElement(href ? "a" : "span");
  element.className = "citelab-source-title";
  element.textContent = label ?? "Untitled source";
  if (href) element.setAttribute("href", href);
  return element;
}

/**
 * Keeps a section in step with a list of turns, re-rendering from the first turn whose
 * references changed (normally only the last one, which is the current turn).
 */
export class ReferencesController {
  constructor(section) {
    this.section = section;
    this.rendered = []; // [{turnId, references, pending}]
  }

  /** Returns the turn ids whose elements were re-rendered. */
  sync(turns) {
    const wanted = turns.map((turn, index) => ({
      turnId: turn.turn_id,
      // A failed turn cited nothing: its retrieved sources are not shown.
      references:
        Array.isArray(turn.references) && turn.status !== "error" ? turn.references : null,
      pending: !Array.isArray(turn.references) && isOpen(turn.status),
      retrieved: isOpen(turn.status),
      answer: index + 1,
    }));
    let first = 0;
    while (first < wanted.length && sameRendering(wanted[first], this.rendered[first])) first++;
    if (first === wanted.length && first === this.rendered.length) return [];
    // Only the last turn changed, and it is still there (a turn's end, most often): its list
    // is redrawn where it is, keeping the cards that did not change (showReferences).
    const last = this.rendered.length - 1;
    const inPlace = first === last && wanted[first]?.turnId === this.rendered[last].turnId;
    if (inPlace) {
      if (!wanted[first].references) this.section.removeTurn(wanted[first].turnId);
    } else if (first === 0) this.section.clear();
    else
      for (const old of this.rendered.slice(first).reverse()) this.section.removeTurn(old.turnId);
    for (const turn of wanted.slice(first)) {
      if (turn.references) {
        const { retrieved, answer } = turn;
        this.section.showReferences(turn.turnId, turn.references, { retrieved, answer });
      }
      else if (turn.pending) this.section.showPending(turn.turnId);
    }
    this.rendered = wanted;
    return wanted.slice(first).map((turn) => turn.turnId);
  }
}

function isOpen(status) {
  return status === "pending" || status === "streaming";
}

function sameRendering(a, b) {
  return (
    b !== undefined &&
    a.turnId === b.turnId &&
    a.references === b.references &&
    a.pending === b.pending &&
    a.retrieved === b.retrieved
  );
}

/**
 * Point the citation links of one turn (inside `root`) at their cards, via `resolve(turn,
 * number) → element|null`. A number with no card loses its href (it is not a link then).
 */
export function linkCitations(root, turnId, resolve) {
  const turn = safeTurnId(turnId);
  const titles = new Map(); // card → its title: read once per card, not once per marker
  for (const link of root.querySelectorAll("a[data-ref-index]")) {
    if (link.dataset.refTurn !== turn) continue;
    const card = resolve(turn, Number(link.dataset.refIndex));
    if (card?.id) {
      if (!titles.has(card)) {
        titles.set(card, card.querySelector?.(".citelab-source-title")?.textContent ?? "");
      }
      const title = titles.get(card);
      const label = `Source ${link.dataset.refIndex}`;
      setAttributeIfChanged(link, "href", `#${card.id}`);
      removeAttributeIfSet(link, "aria-disabled");
      setAttributeIfChanged(link, "aria-label", title ? `${label}: ${title}` : label);
    } else {
      removeAttributeIfSet(link, "href");
      setAttributeIfChanged(link, "aria-disabled", "true");
      removeAttributeIfSet(link, "aria-label");
    }
  }
}

// Relinking runs over every marker of a turn at its end: leave unchanged attributes alone
// (each write invalidates styles, even of the same value).
function setAttributeIfChanged(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

function removeAttributeIfSet(node, name) {
  if (node.hasAttribute(name)) node.removeAttribute(name);
}
