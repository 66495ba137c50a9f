// Citation links: each `[n]` marker of a turn points at the card of source n (or is no
// link when there is none), and following one tells every Sources panel on the page.
import { isHtml, removeAttributeIfSet, setAttributeIfChanged } from "../../dom/nodes.js";
import { safeTurnId } from "../../render/citations.js";

/** Fired (bubbling, on the chat) when a citation link is followed: detail {turnId, number,
 * conversationId}. Sources panels listen on the document and show the cited card. */
export const CITE_EVENT = "citelab:cite";

/**
 * Point the citation links of one turn (inside `root`) at their cards, via `resolve(turn,
 * number) → element|null`. A number with no card loses its href (it is not a link then).
 * @param {ParentNode} root
 * @param {string} turnId
 * @param {(turn: string, number: number) => ({id: string, querySelector?: Element["querySelector"]}|null)} resolve
 */
export function linkCitations(root, turnId, resolve) {
  const turn = safeTurnId(turnId);
  /** @type {Map<object, string>} */
  const titles = new Map(); // card → its title: read once per card, not once per marker
  for (const link of root.querySelectorAll("a[data-ref-index]")) {
    if (!isHtml(link)) continue;
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
