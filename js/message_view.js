// MessageView: any AnswerMessage wire dict rendered from its blocks alone. The source list
// comes from its resource_link blocks (priority order, stable on ties); the text block's
// anchors (`_meta["drupal.org/ai.citations"]`) become highlighted cited spans, each followed
// by a footnote marker linking to its source; suggested replies become chips. Without
// `_meta` the source list still shows. Anchors that do not hold (unknown sourceUri, offsets
// out of range, citedText not equal to the slice) are ignored and counted. A source whose
// `_meta["citelab/url"]` is a URL the front end links (urls.js) opens that web page, and shows
// its uri (the source's identity) after the link.
import { element, show, uniqueId } from "./dom.js";
import { icon } from "./icons.js";
import { renderBlocks } from "./markdown.js";
import { codePointIndex, toUtf16 } from "./offsets.js";
import { openLinksInNewTab, referenceHref, sourceTitle } from "./references.js";
import { sanitizeToFragment } from "./sanitize.js";

export const CITATIONS_KEY = "drupal.org/ai.citations";
export const SUGGESTED_REPLIES_KEY = "drupal.org/ai.suggested_replies";
export const SOURCE_URL_KEY = "citelab/url";

/** Read a wire dict into `{texts: [{text, anchors}], sources, replies, ignored}`. */
export function readMessage(message) {
  const content = Array.isArray(message?.content) ? message.content : [];
  const sources = content
    .filter((block) => block?.type === "resource_link" && typeof block.uri === "string")
    .map((block, order) => ({ block, order, priority: priorityOf(block) }))
    .sort((a, b) => b.priority - a.priority || a.order - b.order)
    .map(({ block }, index) => ({ ...block, number: index + 1, webUrl: webUrlOf(block) }));
  const numberOf = new Map();
  for (const source of sources)
    if (!numberOf.has(source.uri)) numberOf.set(source.uri, source.number);
  let ignored = 0;
  const texts = content
    .filter((block) => block?.type === "text" && typeof block.text === "string")
    .map((block) => {
      const { anchors, rejected } = readAnchors(block, numberOf);
      ignored += rejected;
      return { text: block.text, anchors };
    });
  return { texts, sources, replies: readReplies(message), ignored };
}

/**
 * The web page a resource_link opens: its `_meta["citelab/url"]`, checked again here (the
 * message is untrusted, whoever validated it), or null when it is absent or not a URL the
 * front end links.
 */
export function webUrlOf(block) {
  const meta = block?._meta;
  const url = meta && typeof meta === "object" ? meta[SOURCE_URL_KEY] : undefined;
  return typeof url === "string" ? referenceHref({ url }) : null;
}

function priorityOf(block) {
  const priority = block.annotations?.priority;
  return typeof priority === "number" && Number.isFinite(priority) ? priority : -1;
}

function readAnchors(block, numberOf) {
  const raw = block._meta?.[CITATIONS_KEY];
  if (!Array.isArray(raw)) return { anchors: [], rejected: 0 };
  const index = codePointIndex(block.text);
  const anchors = [];
  for (const anchor of raw) {
    const start = toUtf16(index, anchor?.startIndex);
    const end = toUtf16(index, anchor?.endIndex);
    const number = numberOf.get(anchor?.sourceUri);
    const holds =
      number !== undefined &&
      start >= 0 &&
      end > start &&
      block.text.slice(start, end) === anchor.citedText;
    if (holds) anchors.push({ start, end, number, order: anchors.length });
  }
  return { anchors, rejected: raw.length - anchors.length };
}

function readReplies(message) {
  const raw = message?._meta?.[SUGGESTED_REPLIES_KEY];
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((reply) => typeof reply?.label === "string" && reply.label.trim())
    .map((reply) => ({
      label: reply.label,
      message: typeof reply.message === "string" && reply.message ? reply.message : reply.label,
    }));
}

/**
 * Render `message` into `root` (replacing its content). `onReply(text)` is called when a
 * chip is clicked; `violations` (`[{path, code, message}]`, untrusted text) are listed under
 * a warning that opens and closes. Returns `{placed, ignored}` anchor counts.
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
    linkMarkers(answer, sourceIds);
    placed += highlightAnchors(answer, text, anchors, sourceIds);
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
function violationList(doc, violations, root) {
  const problems = (Array.isArray(violations) ? violations : []).filter(
    (violation) => violation && typeof violation === "object",
  );
  if (!problems.length) return null;
  const details = element(doc, "details", "citelab-violations");
  details.open = root.querySelector(":scope > .citelab-violations")?.open ?? false;
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

function followInside(root, event) {
  const link = event.target.closest?.("a[href^='#']");
  if (!link || !root.contains(link)) return;
  const target = root.ownerDocument.getElementById(link.getAttribute("href").slice(1));
  if (!target || !root.contains(target)) return;
  event.preventDefault();
  target.scrollIntoView?.({ block: "nearest" });
  target.focus();
}

// `[n]` in the text names the n-th source of the list (the contract numbers sources in
// first-citation order, which is also their priority order).
function linkMarkers(root, sourceIds) {
  for (const link of root.querySelectorAll("a[data-ref-index]")) {
    const id = sourceIds.get(Number(link.dataset.refIndex));
    if (id) link.setAttribute("href", `#${id}`);
    else {
      link.removeAttribute("href");
      link.setAttribute("aria-disabled", "true");
    }
  }
}

function sourceList(doc, sources, sourceIds) {
  const section = element(doc, "section", "citelab-sources");
  const heading = element(doc, "h3", "citelab-sources-heading", "Sources");
  heading.id = uniqueId("citelab-msg-heading");
  const list = element(doc, "ol", "citelab-sources-list");
  list.setAttribute("aria-labelledby", heading.id);
  for (const source of sources) {
    const item = element(doc, "li", "citelab-source");
    item.id = sourceIds.get(source.number);
    item.tabIndex = -1;
    item.dataset.source = String(source.number);
    const { title, name, uri, webUrl } = source;
    item.append(sourceTitle(doc, { title, name, uri, url: webUrl ?? undefined }));
    if (webUrl && webUrl !== uri) {
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

function wireHover(root, section) {
  const toggle = (event, on) => {
    const item = event.target.closest?.("li[data-source]");
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

// ---- mapping rendered text back to the Markdown source -------------------------------------

const NEAR = 64; // how far a short piece of text may be from the previous one in the source

/**
 * Map every character of every text node under `root` to its UTF-16 position in `source`
 * (or -1). Rendered text is, nearly, the source with the Markdown syntax taken out, so the
 * pieces are found in order; entities and escapes fall back to character by character.
 */
export function alignText(root, source) {
  const aligned = [];
  const steps = alignSteps(root, source, aligned);
  while (!steps.next().done);
  return aligned;
}

// alignText one text node at a time (a step per node), into `aligned`.
function* alignSteps(root, source, aligned) {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, doc.defaultView.NodeFilter.SHOW_TEXT);
  let cursor = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.data;
    if (!text.trim()) continue; // renderer newlines between tags have no place in the source
    const positions = new Int32Array(text.length).fill(-1);
    const found = source.indexOf(text, cursor);
    const distinctive = text.trim().length >= 4;
    if (found !== -1 && (distinctive || found - cursor <= NEAR)) {
      for (let k = 0; k < text.length; k++) positions[k] = found + k;
      cursor = found + text.length;
    } else {
      for (let k = 0; k < text.length; k++) {
        const at = source.indexOf(text[k], cursor);
        if (at !== -1 && at - cursor <= NEAR) {
          positions[k] = at;
          cursor = at + 1;
        }
      }
    }
    aligned.push({ node, positions });
    yield;
  }
}

/**
 * The anchors of an AnswerMessage's text block as `[{start, end, number, order}]` (UTF-16
 * offsets into `text`), numbered by the chat's references (uri → the number the text uses).
 * Anchors that do not hold are left out; none when the message's text is not `text`.
 */
export function readAnchorsOf(message, text, references) {
  const block = (Array.isArray(message?.content) ? message.content : []).find(
    (candidate) => candidate?.type === "text" && typeof candidate.text === "string",
  );
  if (!block || block.text !== text || !Array.isArray(references)) return [];
  const numberOf = new Map();
  for (const reference of references) {
    if (typeof reference?.uri === "string" && !numberOf.has(reference.uri))
      numberOf.set(reference.uri, Number(reference.number));
  }
  return readAnchors(block, numberOf).anchors;
}

/**
 * Wrap the spans `anchors` cite in `<mark class="citelab-cited" data-sources="n …">`. With
 * `sourceIds` (number → card id) each span is followed by a footnote link; with null (the
 * chat, whose text has its own markers) it is not. Returns how many anchors were placed.
 */
export function highlightAnchors(root, source, anchors, sourceIds) {
  const marking = new AnchorMarking(root, source, anchors, sourceIds);
  marking.step();
  return marking.placed;
}

/**
 * highlightAnchors as work done in slices (hundreds of cited spans take longer than a frame
 * should): each `step(hasTime)` works until `hasTime()` says no more and returns the marks it
 * added; `done` once every span is marked (`placed` then counts the anchors placed). Steps
 * alone or in one go leave the same DOM. Between steps nothing else may change the text
 * under `root`: a caller that redraws it cancels the marking first (and may start again).
 */
export class AnchorMarking {
  constructor(root, source, anchors, sourceIds) {
    this.placed = 0;
    this.done = anchors.length === 0;
    this.added = [];
    this.steps = this.done ? null : markingSteps(this, root, source, anchors, sourceIds);
  }

  step(hasTime = () => true) {
    const added = (this.added = []);
    while (!this.done) {
      const next = this.steps.next();
      if (next.done) {
        this.done = true;
        this.placed = next.value;
      } else if (!hasTime()) break;
    }
    return added;
  }
}

// Align the text, sweep the anchors into coverage, find where each ends, then wrap the runs
// of each text node: a step per text node (twice) or per stretch of the coverage.
function* markingSteps(marking, root, source, anchors, sourceIds) {
  const aligned = [];
  yield* alignSteps(root, source, aligned);
  const cover = yield* coverageSteps(anchors, source.length);
  const lastChar = new Map(); // anchor → {entry, k, position}
  for (const entry of aligned) {
    findLastCharacters(entry, cover, lastChar);
    yield;
  }
  for (const entry of aligned) {
    wrapRuns(entry, cover, lastChar, sourceIds, marking.added);
    yield;
  }
  return lastChar.size;
}

/** Take the cited-span marks out of `root` again (their text stays, in one text node). */
export function unmarkCitedSpans(root) {
  const parents = new Set();
  for (const mark of root.querySelectorAll("mark.citelab-cited")) {
    parents.add(mark.parentNode);
    mark.replaceWith(...mark.childNodes);
  }
  for (const parent of parents) parent.normalize();
}

const UNCOVERED = Object.freeze({ set: Object.freeze([]), key: "" });
const COVERAGE_STEP = 4096; // source positions per step

// Which anchors cover each source position, as `{set, key}` (`set` in anchor order, `key`
// their orders): one shared entry per stretch where the set does not change. A sweep over
// the anchors' starts and ends, so the cost is the text's length plus the anchors', not
// their product (an answer with an anchor per sentence has hundreds).
function* coverageSteps(anchors, length) {
  const edges = new Map(); // position → anchors starting there (ends are found by filter)
  const stops = new Set();
  for (const anchor of anchors) {
    if (!edges.has(anchor.start)) edges.set(anchor.start, []);
    edges.get(anchor.start).push(anchor);
    stops.add(anchor.end);
  }
  const at = new Array(length);
  let current = UNCOVERED;
  for (let position = 0; position < length; position++) {
    const starting = edges.get(position);
    if (starting || stops.has(position)) {
      const set = current.set.filter((anchor) => anchor.end > position);
      if (starting) set.push(...starting);
      set.sort((a, b) => a.order - b.order);
      current = set.length ? { set, key: set.map((anchor) => anchor.order).join(" ") } : UNCOVERED;
    }
    at[position] = current;
    if (position % COVERAGE_STEP === COVERAGE_STEP - 1) yield;
  }
  return at;
}

// For each anchor, the (node, character) that ends it in the rendered text, so far: one
// text node's share (its entry of the alignment) into `last`.
function findLastCharacters(entry, cover, last) {
  const { positions } = entry;
  for (let k = 0; k < positions.length; k++) {
    const position = positions[k];
    if (position < 0) continue;
    for (const anchor of cover[position]?.set ?? UNCOVERED.set) {
      const best = last.get(anchor);
      if (!best || position >= best.position) last.set(anchor, { entry, k, position });
    }
  }
}

function wrapRuns(entry, cover, lastChar, sourceIds, added) {
  const { node, positions } = entry;
  const runs = [];
  for (let k = 0; k < positions.length; k++) {
    const { set, key } = positions[k] < 0 ? UNCOVERED : (cover[positions[k]] ?? UNCOVERED);
    if (runs.length && runs.at(-1).key === key) runs.at(-1).end = k + 1;
    else runs.push({ key, set, start: k, end: k + 1 });
  }
  if (runs.every((run) => run.set.length === 0)) return;
  const doc = node.ownerDocument;
  const pieces = [];
  for (const run of runs) {
    const text = node.data.slice(run.start, run.end);
    if (!run.set.length) {
      pieces.push(doc.createTextNode(text));
      continue;
    }
    const mark = element(doc, "mark", "citelab-cited", text);
    mark.dataset.anchors = run.key;
    mark.dataset.sources = [...new Set(run.set.map((a) => a.number))].join(" ");
    pieces.push(mark);
    added.push(mark);
    for (const anchor of sourceIds ? run.set : []) {
      const end = lastChar.get(anchor);
      if (end?.entry === entry && end.k >= run.start && end.k < run.end) {
        pieces.push(footnote(doc, anchor.number, sourceIds.get(anchor.number)));
      }
    }
  }
  node.replaceWith(...pieces);
  for (const piece of pieces) if (piece.classList?.contains("citelab-footnote")) hoist(piece);
}

const INLINE = new Set(["strong", "em", "code", "a"]);

// A footnote that ends an inline element goes after it: not bold, not inside a code span,
// and never an <a> inside an <a>.
function hoist(footnoteElement) {
  let parent = footnoteElement.parentElement;
  while (parent && INLINE.has(parent.localName) && footnoteElement.nextSibling === null) {
    parent.after(footnoteElement);
    parent = footnoteElement.parentElement;
  }
  // Still inside a link (the span ended mid-link): put the marker right after the link.
  const link = footnoteElement.parentElement?.closest("a");
  if (link) link.after(footnoteElement);
}

function footnote(doc, number, id) {
  const marker = element(doc, "sup", "citelab-footnote");
  const link = element(doc, "a", "", String(number));
  link.setAttribute("href", `#${id}`);
  link.dataset.source = String(number);
  link.setAttribute("aria-label", `Source ${number}`);
  marker.append(link);
  return marker;
}
