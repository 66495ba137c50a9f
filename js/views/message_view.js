// MessageView: any AnswerMessage wire dict rendered from its blocks alone. The source list
// comes from its resource_link blocks (priority order, stable on ties); the text block's
// anchors (`_meta["drupal.org/ai.citations"]`) become highlighted cited spans, each followed
// by a footnote marker linking to its source; suggested replies become chips. Without
// `_meta` the source list still shows. Anchors that do not hold (unknown sourceUri, offsets
// out of range, citedText not equal to the slice) are ignored and counted. A source whose
// `_meta["citelab/url"]` is a URL the front end links (urls.js) opens that web page, and shows
// its uri (the source's identity) after the link.
import { readMessage } from "../contract/message.js";
import { sourceLabel } from "../contract/reference.js";
import { icon } from "../dom/icons.js";
import { element, isHtml, show, uniqueId } from "../dom/nodes.js";
import { highlightAnchors } from "../render/anchors.js";
import { renderBlocks } from "../render/markdown.js";
import { sanitizeToFragment } from "../render/sanitize.js";
import { openLinksInNewTab, sourceTitle } from "./references/cards.js";

/**
 * Render `message` into `root` (replacing its content). `onReply(text)` is called when a
 * chip is clicked; `violations` (`[{path, code, message}]`, untrusted text) are listed under
 * a warning that opens and closes. Returns `{placed, ignored}` anchor counts.
 * @param {HTMLElement} root
 * @param {import("../contract/message.js").WireMessage|null|undefined} message
 * @param {{onReply?: (text: string) => void, violations?: unknown}} [options]
 * @returns {{placed: number, ignored: number}}
 */
export function renderMessage(root, message, { onReply = () => {}, violations = [] } = {}) {
  const doc = root.ownerDocument;
  const warnings = violationList(doc, violations, root);
  const { texts, sources, replies, ignored } = readMessage(message);
  const prefix = uniqueId("citelab-msg");
  const sourceIds = new Map(
    sources.map((source) => [source.number, `${prefix}-src-${source.number}`]),
  );
  root.classList.add("citelab", "citelab-message");
  const body = element(doc, "div", "citelab-message-text");
  let placed = 0;
  for (const { text, anchors } of texts) {
    const answer = element(doc, "div", "citelab-answer");
    answer.append(sanitizeToFragment(renderBlocks(text, { turn: prefix }).join("")));
    const marked = linkMarkers(answer, sourceIds);
    // A footnote only for a source the text has no marker of: each marker shows once.
    const footnotes = new Map([...sourceIds].filter(([number]) => !marked.has(number)));
    placed += highlightAnchors(answer, text, anchors, footnotes);
    body.append(answer);
  }
  const list = sourceList(doc, sources, sourceIds);
  const chips = element(doc, "div", "citelab-chips");
  chips.setAttribute("role", "group");
  chips.setAttribute("aria-label", "Suggested replies");
  for (const reply of replies) {
    const chip = element(doc, "button", "citelab-chip", reply.label);
    chip.type = "button";
    chip.addEventListener("click", () => onReply(reply.message));
    chips.append(chip);
  }
  show(chips, replies.length > 0);
  root.replaceChildren(...(warnings ? [warnings] : []), body, list, chips);
  root.dataset.ignoredAnchors = String(ignored);
  wireHover(root, list);
  // Footnotes and markers point inside this view; move focus there instead of changing the
  // page's location (which JupyterLab would treat as navigation).
  root.onclick = (event) => followInside(root, event);
  return { placed, ignored };
}

// The contract violations the kernel found, first (they say why the rest may look wrong).
// Closed by default; a redraw of the same view keeps it open or closed as the person left it.
/**
 * @param {Document} doc
 * @param {unknown} violations  Violation[] (model.js), if it is one
 * @param {HTMLElement} root
 */
function violationList(doc, violations, root) {
  /** @type {Partial<import("../contract/model.js").Violation>[]} */
  const problems = (Array.isArray(violations) ? violations : []).filter(
    (violation) => violation && typeof violation === "object",
  );
  if (!problems.length) return null;
  const details = element(doc, "details", "citelab-violations");
  const shown = /** @type {HTMLDetailsElement|null} */ (
    root.querySelector(":scope > .citelab-violations")
  );
  details.open = shown?.open ?? false;
  const count = problems.length;
  const summary = element(
    doc,
    "summary",
    "citelab-violations-summary",
    `${count} contract violation${count === 1 ? "" : "s"}`,
  );
  summary.prepend(icon(doc, "warning"));
  const list = element(doc, "ul", "citelab-violations-list");
  for (const { path, code, message } of problems) {
    const item = element(doc, "li", "citelab-violation");
    item.dataset.code = String(code ?? "");
    item.append(
      element(doc, "code", "citelab-violation-path", String(path ?? "$")),
      doc.createTextNode(" "),
      element(doc, "span", "citelab-violation-message", String(message ?? "")),
      doc.createTextNode(" "),
      element(doc, "span", "citelab-violation-code", `[${String(code ?? "")}]`),
    );
    list.append(item);
  }
  details.append(summary, list);
  return details;
}

/**
 * @param {HTMLElement} root
 * @param {MouseEvent} event
 */
function followInside(root, event) {
  const link = /** @type {Element|null} */ (event.target)?.closest?.("a[href^='#']");
  if (!link || !root.contains(link)) return;
  const target = root.ownerDocument.getElementById((link.getAttribute("href") ?? "").slice(1));
  if (!target || !root.contains(target)) return;
  event.preventDefault();
  target.scrollIntoView?.({ block: "nearest" });
  target.focus();
}

// `[n]` in the text names the n-th source of the list (the contract numbers sources in
// first-citation order, which is also their priority order).
// Returns the numbers the text has markers of.
/**
 * @param {ParentNode} root
 * @param {Map<number, string>} sourceIds
 * @returns {Set<number>}
 */
function linkMarkers(root, sourceIds) {
  /** @type {Set<number>} */
  const marked = new Set();
  for (const link of root.querySelectorAll("a[data-ref-index]")) {
    if (!isHtml(link)) continue;
    const number = Number(link.dataset.refIndex);
    const id = sourceIds.get(number);
    marked.add(number);
    if (id) link.setAttribute("href", `#${id}`);
    else {
      link.removeAttribute("href");
      link.setAttribute("aria-disabled", "true");
    }
  }
  return marked;
}

/**
 * @param {Document} doc
 * @param {import("../contract/message.js").Source[]} sources
 * @param {Map<number, string>} sourceIds
 */
function sourceList(doc, sources, sourceIds) {
  const section = element(doc, "section", "citelab-sources");
  const heading = element(doc, "h3", "citelab-sources-heading", "Sources");
  heading.id = uniqueId("citelab-msg-heading");
  const list = element(doc, "ol", "citelab-sources-list");
  list.setAttribute("aria-labelledby", heading.id);
  const labels = sources.map((source) => sourceLabel(source));
  for (const [index, source] of sources.entries()) {
    const item = element(doc, "li", "citelab-source");
    item.id = sourceIds.get(source.number) ?? "";
    item.tabIndex = -1;
    item.dataset.source = String(source.number);
    const { title, name, uri, webUrl } = source;
    // The list's own count is not shown (the numbers may be conversation-wide): each item
    // says the number the text uses, as the chat's cards do.
    item.append(element(doc, "span", "citelab-source-number", `[${source.number}]`), " ");
    item.append(sourceTitle(doc, { title, name, uri, url: webUrl ?? undefined }));
    // Two sources of one title ("Data Science", the BSc and the MSc) are told apart by
    // their URI, the only identity the message gives them.
    const shared = labels.indexOf(labels[index]) !== labels.lastIndexOf(labels[index]);
    if ((webUrl && webUrl !== uri) || (shared && uri !== labels[index])) {
      item.append(" ", element(doc, "code", "citelab-source-uri", uri));
    }
    if (typeof source.description === "string" && source.description.trim()) {
      item.append(element(doc, "p", "citelab-source-snippet", source.description));
    }
    openLinksInNewTab(item);
    list.append(item);
  }
  section.append(heading, list);
  show(section, sources.length > 0);
  return section;
}

/**
 * @param {HTMLElement} root
 * @param {HTMLElement} section
 */
function wireHover(root, section) {
  /**
   * @param {Event} event
   * @param {boolean} on
   */
  const toggle = (event, on) => {
    const item = /** @type {HTMLElement|null|undefined} */ (
      /** @type {Element|null} */ (event.target)?.closest?.("li[data-source]")
    );
    if (!item) return;
    const selector = `mark[data-sources~="${item.dataset.source}"]`;
    for (const mark of root.querySelectorAll(selector))
      mark.classList.toggle("citelab-cited-active", on);
  };
  section.addEventListener("mouseover", (event) => toggle(event, true));
  section.addEventListener("mouseout", (event) => toggle(event, false));
  section.addEventListener("focusin", (event) => toggle(event, true));
  section.addEventListener("focusout", (event) => toggle(event, false));
}

