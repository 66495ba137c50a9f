// The shared references section: one list for every turn of a conversation. Each card and
// placeholder carries its turn (data-ref-turn); re-rendering a turn touches only its own
// elements. One card per source across turns: a source seen again (same referenceKey) gets
// no second card, and its citation number points at the earlier card.
import { safeTurnId } from "./citations.js";
import { uniqueId } from "./dom.js";
import { isAbsoluteAllowedUrl, isAllowedUrl, isFragmentUrl } from "./urls.js";

const LINK_REL = "noopener noreferrer";

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
   * @param {HTMLElement} root  an element to fill (a heading and an ordered list)
   * @param {{heading?: string}} options
   */
  constructor(root, { heading = "Sources" } = {}) {
    const doc = root.ownerDocument;
    this.root = root;
    this.idPrefix = uniqueId("citelab-src");
    root.classList.add("citelab-sources");
    const title = doc.createElement("h3");
    title.className = "citelab-sources-heading";
    title.id = `${this.idPrefix}-heading`;
    title.textContent = heading;
    this.list = doc.createElement("ol");
    this.list.className = "citelab-sources-list";
    this.list.setAttribute("aria-labelledby", title.id);
    root.replaceChildren(title, this.list);
    this.seen = new Map(); // referenceKey → card element (first turn that showed it)
    this.targets = new Map(); // "turn number" → card element
    this.updateVisibility();
  }

  /** A genuinely new question: nothing of the old conversation stays. */
  clear() {
    this.list.replaceChildren();
    this.seen.clear();
    this.targets.clear();
    this.updateVisibility();
  }

  /** Remove one turn's cards and placeholders (and forget the sources it introduced). */
  removeTurn(turnId) {
    const turn = safeTurnId(turnId);
    for (const element of this.turnElements(turn)) element.remove();
    for (const [key, card] of this.seen) if (card.dataset.refTurn === turn) this.seen.delete(key);
    for (const key of this.targets.keys()) if (key.startsWith(`${turn} `)) this.targets.delete(key);
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

  /** Show (or replace) one turn's references. */
  showReferences(turnId, references) {
    this.removeTurn(turnId);
    const turn = safeTurnId(turnId);
    for (const reference of references) {
      const number = Number(reference.number);
      const key = referenceKey(reference);
      const earlier = key === null ? undefined : this.seen.get(key);
      if (earlier) {
        this.targets.set(`${turn} ${number}`, earlier);
        continue;
      }
      const card = this.buildCard(reference, turn, number);
      this.list.append(card);
      this.targets.set(`${turn} ${number}`, card);
      if (key !== null) this.seen.set(key, card);
    }
    this.updateVisibility();
  }

  /** The card citation `[number]` of `turnId` points at, if any. */
  target(turnId, number) {
    return this.targets.get(`${safeTurnId(turnId)} ${number}`) ?? null;
  }

  turnElements(turn) {
    return [...this.list.children].filter((element) => element.dataset.refTurn === turn);
  }

  buildCard(reference, turn, number) {
    const doc = this.root.ownerDocument;
    const card = doc.createElement("li");
    card.className = "citelab-source";
    card.id = `${this.idPrefix}-${turn}-${number}`;
    card.tabIndex = -1; // focusable when a citation link is followed
    card.dataset.refTurn = turn;
    card.dataset.refIndex = String(number);
    card.append(sourceTitle(doc, reference));
    if (typeof reference.langcode === "string" && LANGCODE.test(reference.langcode)) {
      const lang = doc.createElement("span");
      lang.className = "citelab-source-lang";
      lang.textContent = reference.langcode;
      card.append(" ", lang);
    }
    if (typeof reference.snippet === "string" && reference.snippet.trim()) {
      const snippet = doc.createElement("p");
      snippet.className = "citelab-source-snippet";
      snippet.textContent = reference.snippet;
      card.append(snippet);
    }
    openLinksInNewTab(card);
    return card;
  }

  updateVisibility() {
    this.root.hidden = this.list.children.length === 0;
  }
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
    const wanted = turns.map((turn) => ({
      turnId: turn.turn_id,
      references: Array.isArray(turn.references) ? turn.references : null,
      pending: !Array.isArray(turn.references) && isOpen(turn.status),
    }));
    let first = 0;
    while (first < wanted.length && sameRendering(wanted[first], this.rendered[first])) first++;
    if (first === wanted.length && first === this.rendered.length) return [];
    if (first === 0) this.section.clear();
    else
      for (const old of this.rendered.slice(first).reverse()) this.section.removeTurn(old.turnId);
    for (const turn of wanted.slice(first)) {
      if (turn.references) this.section.showReferences(turn.turnId, turn.references);
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
    a.pending === b.pending
  );
}

/**
 * Point the citation links of one turn (inside `root`) at their cards, via `resolve(turn,
 * number) → element|null`. A number with no card loses its href (it is not a link then).
 */
export function linkCitations(root, turnId, resolve) {
  const turn = safeTurnId(turnId);
  for (const link of root.querySelectorAll("a[data-ref-index]")) {
    if (link.dataset.refTurn !== turn) continue;
    const card = resolve(turn, Number(link.dataset.refIndex));
    if (card?.id) {
      link.setAttribute("href", `#${card.id}`);
      link.removeAttribute("aria-disabled");
      const title = card.querySelector?.(".citelab-source-title")?.textContent ?? "";
      const label = `Source ${link.dataset.refIndex}`;
      link.setAttribute("aria-label", title ? `${label}: ${title}` : label);
    } else {
      link.removeAttribute("href");
      link.setAttribute("aria-disabled", "true");
      link.removeAttribute("aria-label");
    }
  }
}
