// Incremental Markdown rendering for a growing answer. Only the unsettled tail is parsed on
// each update, so the cost of an update does not grow with the answer.
//
// Settling (block i is final): the next block starts after a blank line and its first line
// is complete. Text after a blank line cannot reach back into an earlier block, with two
// exceptions, both handled: the next block's first line may still turn into a continuation
// (`1. a\n\n2` becomes one list once `2.` arrives), hence "first line complete"; and a link
// reference definition written later can change how an earlier `[label]` renders, hence the
// label lookups of settled blocks are remembered and a changed definition re-renders from the
// start (rare in model output; the DOM keeps every block whose HTML did not change).
import { markdown, parseBlocks, referenceValueKey } from "./markdown.js";

const BLANK_LINE = /^[ \t]*$/;

/** @typedef {import("./markdown.js").Block} Block */
/** @typedef {import("./markdown.js").Definition} Definition */
/** @typedef {import("./markdown.js").LinkReference} LinkReference */
/**
 * @typedef {object} ParsedTail
 * @property {string} src
 * @property {Block[]} blocks
 * @property {Definition[]} definitions
 * @property {Record<string, LinkReference>} references
 * @property {Map<string, string>} lookups
 */

export class BlockStream {
  /** @param {{turn?: string, md?: import("markdown-it").MarkdownIt}} options */
  constructor({ turn = "", md = markdown() } = {}) {
    this.md = md;
    this.turn = turn;
    this.stats = { parses: 0, parsedChars: 0, resets: 0 };
    this.reset();
  }

  reset() {
    /** @type {string} */
    this.raw = ""; // the text as given (kept by reference: it is the caller's string)
    // The unsettled tail only, normalized like markdown-it does (\r\n and \r → \n, NUL →
    // U+FFFD): settled text is never looked at again, so it is not kept or copied.
    /** @type {string} */
    this.tailText = "";
    /** @type {boolean} */
    this.endsWithCR = false;
    /** @type {number} */
    this.settledLength = 0; // normalized characters settled so far
    /** @type {{html: string}[]} */
    this.settled = [];
    /** @type {Record<string, LinkReference>} */
    this.settledReferences = Object.create(null);
    /** @type {Map<string, string>} */
    this.settledLookups = new Map();
    /** @type {{html: string}[]} */
    this.tail = [];
  }

  /** The blocks after the last update: `[{html}]`; settled blocks are the same objects. */
  get blocks() {
    return this.settled.concat(this.tail);
  }

  /**
   * Show `text` (normally the previous text plus new tokens). Returns the blocks.
   * @param {string} text
   */
  update(text) {
    if (text.length < this.raw.length || !text.startsWith(this.raw)) this.reset();
    this.append(text.slice(this.raw.length));
    this.raw = text;
    this.renderTail();
    return this.blocks;
  }

  /**
   * Show the previous text plus `piece`. Returns the blocks. Same result as `update(previous
   * + piece)`, without reading the whole text: checking that a text extends the previous one
   * costs time in proportion to its length (in Chromium, about 40 µs per update on average
   * over a 25,000-character answer, twice that at its end), while the rest of an update does
   * not grow with the answer.
   * @param {string} piece
   */
  extend(piece) {
    this.append(piece);
    this.raw += piece;
    this.renderTail();
    return this.blocks;
  }

  /** @param {string} piece */
  append(piece) {
    if (!piece) return;
    let normalized = piece.replace(/\0/g, "\ufffd");
    if (this.endsWithCR && normalized.startsWith("\n")) normalized = normalized.slice(1);
    this.endsWithCR = normalized.endsWith("\r");
    this.tailText += normalized.replace(/\r\n?/g, "\n");
  }

  renderTail() {
    let parsed = this.parseTail();
    if (this.settledLookupsChanged(parsed.references)) {
      // A definition changed under a settled block: render everything once more.
      this.stats.resets++;
      const { raw } = this;
      this.reset();
      this.append(raw);
      this.raw = raw;
      parsed = this.parseTail();
    }
    this.settle(parsed);
  }

  /** @returns {ParsedTail} */
  parseTail() {
    const src = this.tailText;
    /** @type {{citelabTurn: string, citelabLookups: Map<string, string>,
     *   references: Record<string, LinkReference>}} */
    const env = {
      citelabTurn: this.turn,
      citelabLookups: new Map(),
      references: Object.assign(Object.create(null), this.settledReferences),
    };
    const { blocks, definitions } = parseBlocks(this.md, src, env);
    this.stats.parses++;
    this.stats.parsedChars += src.length;
    return { src, blocks, definitions, references: env.references, lookups: env.citelabLookups };
  }

  /** @param {Record<string, LinkReference>} references */
  settledLookupsChanged(references) {
    for (const [label, seen] of this.settledLookups) {
      if (referenceValueKey(references[label]) !== seen) return true;
    }
    return false;
  }

  /** @param {ParsedTail} parsed */
  settle({ src, blocks, definitions, references, lookups }) {
    const lines = lineStarts(src);
    let first = 0; // index of the first block that stays unsettled
    for (let i = blocks.length - 1; i > 0; i--) {
      if (startsSettledRun(src, lines, blocks[i].map?.[0] ?? -1)) {
        first = i;
        break;
      }
    }
    this.tail = blocks.slice(first).map(({ html }) => ({ html }));
    if (first === 0) return;
    const boundary = blocks[first].map?.[0] ?? 0;
    for (const { html } of blocks.slice(0, first)) this.settled.push({ html });
    for (const { label, map } of definitions) {
      if (map !== null && map[1] <= boundary && !(label in this.settledReferences)) {
        this.settledReferences[label] = references[label];
      }
    }
    // Lookups of the tail's unsettled blocks are included too: harmless (a later change to
    // those labels re-renders once more than needed) and much simpler than attributing them.
    for (const [label, seen] of lookups) this.settledLookups.set(label, seen);
    this.tailText = src.slice(lines[boundary]);
    this.settledLength += lines[boundary];
  }
}

// Block starting at `line` closes everything before it: a blank line precedes it and its
// own first line is complete.
/**
 * @param {string} src
 * @param {number[]} lines  see lineStarts
 * @param {number} line
 */
function startsSettledRun(src, lines, line) {
  if (line < 1 || line + 1 >= lines.length) return false;
  return BLANK_LINE.test(src.slice(lines[line - 1], lines[line] - 1));
}

// Offsets where each line starts; the last entry is for the (possibly empty) last line.
/** @param {string} src */
function lineStarts(src) {
  const starts = [0];
  for (let i = src.indexOf("\n"); i !== -1; i = src.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}
