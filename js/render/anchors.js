// The cited spans of an answer: the anchors' code-point offsets are offsets into the
// Markdown source, so the rendered text is aligned back to the source, and each run of text
// that anchors cover is wrapped in `<mark class="citelab-cited" data-sources="n …">` (with a
// footnote link after each span in the message view). Each marker link of the text learns the
// anchor its claim is (`data-anchor`: the anchor's index in the message, which the source
// quotes name). Long answers are marked in slices.
import { element } from "../dom/nodes.js";

/** @typedef {import("../contract/message.js").Anchor} Anchor */
/** @typedef {{node: Text, positions: Int32Array}} Aligned  a text node, and per character
 *   its position in the source (-1: none) */
/** @typedef {{readonly set: readonly Anchor[], readonly key: string}} Cover  the anchors
 *   covering a source position, and their orders as a key */
/** @typedef {{entry: Aligned, k: number, position: number}} LastChar */

const NEAR = 64; // how far a short piece of text may be from the previous one in the source

/**
 * Map every character of every text node under `root` to its UTF-16 position in `source`
 * (or -1). Rendered text is, nearly, the source with the Markdown syntax taken out, so the
 * pieces are found in order; entities and escapes fall back to character by character.
 * @param {Node} root
 * @param {string} source
 * @returns {Aligned[]}
 */
export function alignText(root, source) {
  /** @type {Aligned[]} */
  const aligned = [];
  const steps = alignSteps(root, source, aligned);
  while (!steps.next().done);
  return aligned;
}

/**
 * alignText one text node at a time (a step per node), into `aligned`.
 * @param {Node} root
 * @param {string} source
 * @param {Aligned[]} aligned
 * @returns {Generator<void, void>}
 */
function* alignSteps(root, source, aligned) {
  const doc = /** @type {Document} */ (root.ownerDocument);
  const SHOW_TEXT = 4; // NodeFilter.SHOW_TEXT
  const walker = doc.createTreeWalker(root, SHOW_TEXT);
  let cursor = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = /** @type {Text} */ (node).data;
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
    aligned.push({ node: /** @type {Text} */ (node), positions });
    yield;
  }
}

/**
 * Wrap the spans `anchors` cite in `<mark class="citelab-cited" data-sources="n …">`. With
 * `sourceIds` (number → card id) each span is followed by a footnote link; with null (the
 * chat, whose text has its own markers) it is not. Returns how many anchors were placed.
 * @param {Node} root
 * @param {string} source
 * @param {Anchor[]} anchors
 * @param {Map<number, string>|null} sourceIds
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
  /**
   * @param {Node} root
   * @param {string} source
   * @param {Anchor[]} anchors
   * @param {Map<number, string>|null} sourceIds
   */
  constructor(root, source, anchors, sourceIds) {
    this.placed = 0;
    this.done = anchors.length === 0;
    /** @type {HTMLElement[]} */
    this.added = [];
    this.steps = this.done ? null : markingSteps(this, root, source, anchors, sourceIds);
  }

  /**
   * @param {() => boolean} [hasTime]
   * @returns {HTMLElement[]}  the marks this step added
   */
  step(hasTime = () => true) {
    /** @type {HTMLElement[]} */
    const added = (this.added = []);
    while (!this.done && this.steps) {
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
/**
 * @param {AnchorMarking} marking
 * @param {Node} root
 * @param {string} source
 * @param {Anchor[]} anchors
 * @param {Map<number, string>|null} sourceIds
 * @returns {Generator<void, number>}  the number of anchors placed
 */
function* markingSteps(marking, root, source, anchors, sourceIds) {
  /** @type {Aligned[]} */
  const aligned = [];
  yield* alignSteps(root, source, aligned);
  linkAnchors(aligned, anchors, source);
  yield;
  const cover = yield* coverageSteps(anchors, source.length);
  /** @type {Map<Anchor, LastChar>} */
  const lastChar = new Map();
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

// What may stand between a claim and the marker that closes it: white space and marker
// syntax (the markers of one chain, `[1] [2]`, share the claim of the first).
const CLAIM_TO_MARKER = /^[\s[\],\d\u2013-]*$/;

/**
 * Give each marker link (`a[data-ref-index]`) of the aligned text the anchor whose claim it
 * closes: the last anchor of its number ending before it, with nothing but white space and
 * markers between. A marker with no such anchor gets none (never another claim's).
 * @param {Aligned[]} aligned
 * @param {Anchor[]} anchors
 * @param {string} source
 */
function linkAnchors(aligned, anchors, source) {
  /** @type {Map<number, Anchor[]>} */
  const byNumber = new Map();
  for (const anchor of anchors) {
    if (anchor.index === undefined) continue;
    const list = byNumber.get(anchor.number);
    if (list) list.push(anchor);
    else byNumber.set(anchor.number, [anchor]);
  }
  if (!byNumber.size) return;
  for (const list of byNumber.values()) list.sort((a, b) => a.end - b.end);
  for (const { node, positions } of aligned) {
    const link = node.parentElement;
    if (link?.localName !== "a" || link.dataset.refIndex === undefined) continue;
    const position = positions.find((at) => at >= 0);
    const list = byNumber.get(Number(link.dataset.refIndex));
    if (position === undefined || !list) continue;
    const anchor = lastEndingBy(list, position);
    if (anchor && CLAIM_TO_MARKER.test(source.slice(anchor.end, position))) {
      link.dataset.anchor = String(anchor.index);
    }
  }
}

/**
 * The anchor of `sorted` (by end) with the largest end at or before `position`.
 * @param {Anchor[]} sorted
 * @param {number} position
 */
function lastEndingBy(sorted, position) {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle].end <= position) low = middle + 1;
    else high = middle;
  }
  return low > 0 ? sorted[low - 1] : undefined;
}

/**
 * Take the cited-span marks out of `root` again (their text stays, in one text node), and
 * the anchors of its marker links.
 * @param {ParentNode} root
 */
export function unmarkCitedSpans(root) {
  for (const link of root.querySelectorAll("a[data-anchor]")) link.removeAttribute("data-anchor");
  /** @type {Set<Node>} */
  const parents = new Set();
  for (const mark of root.querySelectorAll("mark.citelab-cited")) {
    if (mark.parentNode) parents.add(mark.parentNode);
    mark.replaceWith(...mark.childNodes);
  }
  for (const parent of parents) parent.normalize();
}

/** @type {Cover} */
const UNCOVERED = Object.freeze({ set: Object.freeze([]), key: "" });
const COVERAGE_STEP = 4096; // source positions per step

// Which anchors cover each source position, as `{set, key}` (`set` in anchor order, `key`
// their orders): one shared entry per stretch where the set does not change. A sweep over
// the anchors' starts and ends, so the cost is the text's length plus the anchors', not
// their product (an answer with an anchor per sentence has hundreds).
/**
 * @param {Anchor[]} anchors
 * @param {number} length  of the source
 * @returns {Generator<void, Cover[]>}
 */
function* coverageSteps(anchors, length) {
  /** @type {Map<number, Anchor[]>} */
  const edges = new Map(); // position → anchors starting there (ends are found by filter)
  /** @type {Set<number>} */
  const stops = new Set();
  for (const anchor of anchors) {
    const starting = edges.get(anchor.start);
    if (starting) starting.push(anchor);
    else edges.set(anchor.start, [anchor]);
    stops.add(anchor.end);
  }
  /** @type {Cover[]} */
  const at = new Array(length);
  /** @type {Cover} */
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
/**
 * @param {Aligned} entry
 * @param {Cover[]} cover
 * @param {Map<Anchor, LastChar>} last
 */
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

/**
 * @param {Aligned} entry
 * @param {Cover[]} cover
 * @param {Map<Anchor, LastChar>} lastChar
 * @param {Map<number, string>|null} sourceIds
 * @param {HTMLElement[]} added  the marks made are added here
 */
function wrapRuns(entry, cover, lastChar, sourceIds, added) {
  const { node, positions } = entry;
  /** @type {{key: string, set: readonly Anchor[], start: number, end: number}[]} */
  const runs = [];
  for (let k = 0; k < positions.length; k++) {
    const { set, key } = positions[k] < 0 ? UNCOVERED : (cover[positions[k]] ?? UNCOVERED);
    const last = runs[runs.length - 1];
    if (last?.key === key) last.end = k + 1;
    else runs.push({ key, set, start: k, end: k + 1 });
  }
  if (runs.every((run) => run.set.length === 0)) return;
  const doc = node.ownerDocument;
  /** @type {(Text|HTMLElement)[]} */
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
      const id = sourceIds?.get(anchor.number);
      if (id === undefined) continue; // its marker is in the text already
      const end = lastChar.get(anchor);
      if (end?.entry === entry && end.k >= run.start && end.k < run.end) {
        pieces.push(footnote(doc, anchor.number, id));
      }
    }
  }
  node.replaceWith(...pieces);
  for (const piece of pieces) {
    if ("classList" in piece && piece.classList.contains("citelab-footnote")) hoist(piece);
  }
}

const INLINE = new Set(["strong", "em", "code", "a"]);

// A footnote that ends an inline element goes after it: not bold, not inside a code span,
// and never an <a> inside an <a>.
/** @param {HTMLElement} footnoteElement */
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

/**
 * @param {Document} doc
 * @param {number} number
 * @param {string} id  the source item's element id
 */
function footnote(doc, number, id) {
  const marker = element(doc, "sup", "citelab-footnote");
  const link = element(doc, "a", "", String(number));
  link.setAttribute("href", `#${id}`);
  link.dataset.source = String(number);
  link.setAttribute("aria-label", `Source ${number}`);
  marker.append(link);
  return marker;
}
