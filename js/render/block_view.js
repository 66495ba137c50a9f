// Blocks → DOM. One wrapper element per top-level block; a wrapper whose HTML did not change
// is not touched, so settled blocks keep their elements (a selection survives, an entrance
// animation runs once). A block whose HTML changed (the growing tail) is brought to its new
// content by changing only what differs (morph.js): a paragraph that grew by a word keeps its
// nodes and gets the characters appended, which the browser lays out in about a third of the
// time it takes for a rebuilt paragraph (benchmarks/bench_streaming.py). When the block only
// grew by plain text at its end, the text is appended without a parse or a sanitize at all
// (append.js): most token updates are that.
//
// Wrappers sit in chunks of CHUNK blocks. When the tail grows, the browser lays out the
// container again; with one flat list of wrappers that walks every block of the answer, with
// chunks it walks the chunks and the last chunk's blocks, so the cost of a token stays flat.
// A wrapper never moves between chunks (moving would lose a selection and restart its
// animation). Chunks are plain blocks, so margins collapse through them as before.
import { appendedText, appendToBlock } from "./append.js";
import { morphChildren } from "../dom/morph.js";
import { sanitizeBlock } from "./sanitize.js";

const CHUNK = 16;

/** @typedef {{element: HTMLDivElement, html: string|null, untouched: boolean}} Item */

export class BlockView {
  /** @param {HTMLElement} container */
  constructor(container) {
    this.container = container;
    /** @type {Item[]} */
    this.items = [];
    /** @type {HTMLDivElement[]} */
    this.chunks = [];
    this.stats = { appended: 0 }; // updates done by appending text (tests, benchmarks)
  }

  /**
   * Show `blocks` (`[{html}]`, unsanitized markdown-it output). `prepare(fragment)` may
   * change a block's sanitized content before it is shown (citation links): done before the
   * morph, an unchanged link is then left alone. Returns the wrapper elements whose content
   * changed.
   * @param {{html: string}[]} blocks
   * @param {((fragment: DocumentFragment) => void)|null} [prepare]
   * @returns {HTMLDivElement[]}
   */
  update(blocks, prepare = null) {
    /** @type {HTMLDivElement[]} */
    const changed = [];
    blocks.forEach(({ html }, index) => {
      const item = this.items[index] ?? this.addItem();
      if (item.html === html) return;
      if (!this.appendText(item, html)) {
        const { fragment, untouched } = sanitizeBlock(html);
        prepare?.(fragment);
        morphChildren(item.element, fragment);
        item.untouched = untouched;
      }
      item.html = html;
      changed.push(item.element);
    });
    while (this.items.length > blocks.length) this.removeItem();
    return changed;
  }

  // The block only grew by plain text at its end: append it (see append.js), no sanitize.
  // `prepare` has nothing to do then: plain text holds no link.
  /**
   * @param {Item} item
   * @param {string} html
   */
  appendText(item, html) {
    if (!item.untouched) return false;
    const appended = appendedText(item.html, html);
    if (!appended || !appendToBlock(item.element, appended)) return false;
    this.stats.appended++;
    return true;
  }

  /** The block wrappers, in order. */
  get elements() {
    return this.items.map((item) => item.element);
  }

  addItem() {
    const doc = this.container.ownerDocument;
    const index = this.items.length;
    if (index % CHUNK === 0) {
      const chunk = doc.createElement("div");
      chunk.className = "citelab-chunk";
      this.container.append(chunk);
      this.chunks.push(chunk);
    }
    const element = doc.createElement("div");
    element.className = "citelab-block";
    this.chunks[this.chunks.length - 1].append(element);
    /** @type {Item} */
    const item = { element, html: null, untouched: false };
    this.items.push(item);
    return item;
  }

  removeItem() {
    this.items.pop()?.element.remove();
    if (this.items.length % CHUNK === 0) this.chunks.pop()?.remove();
  }

  clear() {
    this.container.replaceChildren();
    this.items = [];
    this.chunks = [];
  }
}
