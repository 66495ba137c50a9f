// The rest of each case of the browser: one JSON line per turn, optionally packed in
// gzip-compressed base64 blocks, read only when a turn is first opened (see case_browser.js).

/** @typedef {import("./data.js").CaseEntry} CaseEntry */
/**
 * The details: their text, or a function giving it (or the promise of it, while the page is
 * still being read).
 * @typedef {string|null|(() => string|null|Promise<string|null>)} Source
 * @typedef {{encoding?: string, block?: unknown}|null} Packing
 */

const UNREADABLE = "the details of this turn could not be read";

export class Details {
  // `source`: the text, or a function giving it (or the promise of it); `packing`: the
  // packing, or a function giving it (both are read when a turn is first opened).
  /**
   * @param {Source} source
   * @param {Packing|(() => Packing)} packing
   */
  constructor(source, packing) {
    this.source = source;
    this.packing = packing;
    /** @type {string[]|null} */
    this.lines = null; // the plain lines, or the packed blocks
    /** @type {Map<number, string[]|Promise<string[]>>} */
    this.blocks = new Map(); // block number → its lines, or the promise of them
    /** @type {Promise<void>|undefined} */
    this.waiting = undefined;
    this.packed = false;
    this.unknown = "";
    this.block = 1;
  }

  /**
   * The entry at `index` with its details: now when they are at hand (or there are none),
   * else a promise of it (the page is still being read, or its block decompressed).
   * @param {CaseEntry} entry
   * @param {number} index
   * @returns {CaseEntry|Promise<CaseEntry>}
   */
  of(entry, index) {
    if (this.lines === null) {
      /** @type {string|null|Promise<string|null>} */
      let text;
      try {
        text = typeof this.source === "function" ? this.source() : this.source;
      } catch (error) {
        return failed(entry, messageOf(error));
      }
      if (typeof (/** @type {{then?: unknown}|null} */ (text)?.then) === "function") {
        // Still on its way (the page is being parsed): read it once it is there.
        this.waiting ??= /** @type {Promise<string|null>} */ (text).then((arrived) => {
          this.source = arrived;
        });
        return this.waiting.then(
          () => this.of(entry, index),
          (error) => failed(entry, messageOf(error)),
        );
      }
      if (typeof text !== "string") return entry;
      this.read(text);
    }
    const lines = /** @type {string[]} */ (this.lines);
    if (this.unknown) return failed(entry, `unknown encoding ${this.unknown}`);
    if (!this.packed) return merged(entry, lines[index]);
    const number = Math.floor(index / this.block);
    const offset = index - number * this.block;
    const known = this.blocks.get(number);
    if (Array.isArray(known)) return merged(entry, known[offset]);
    let pending = known;
    if (pending === undefined) {
      pending = gunzip(lines[number] ?? "").then((text) => {
        const lines = text.split("\n");
        this.blocks.set(number, lines);
        return lines;
      });
      this.blocks.set(number, pending);
    }
    return pending.then(
      (blockLines) => merged(entry, blockLines[offset]),
      (error) => failed(entry, messageOf(error)),
    );
  }

  /** @param {string} text */
  read(text) {
    const packing = typeof this.packing === "function" ? this.packing() : this.packing;
    const encoding = packing?.encoding ?? "";
    this.packed = encoding === "gzip+base64";
    this.unknown = encoding && !this.packed ? String(encoding) : "";
    this.block = Math.max(1, Math.trunc(Number(packing?.block)) || 1);
    this.lines = text.split("\n");
  }
}

/**
 * @param {unknown} error
 * @returns {string}
 */
function messageOf(error) {
  return String(/** @type {{message?: unknown}|null|undefined} */ (error)?.message);
}

/**
 * @param {CaseEntry} entry
 * @param {string} why
 * @returns {CaseEntry}
 */
function failed(entry, why) {
  return { ...entry, e: entry.e ?? `${UNREADABLE} (${why})` };
}

/**
 * @param {CaseEntry} entry
 * @param {string|undefined} line
 * @returns {CaseEntry}
 */
function merged(entry, line) {
  try {
    return { ...JSON.parse(line ?? "{}"), ...entry };
  } catch {
    return { ...entry, e: entry.e ?? UNREADABLE };
  }
}

/**
 * The text of base64 `encoded` gzip data, decompressed by the browser's own stream.
 * @param {string} encoded
 * @returns {Promise<string>}
 */
async function gunzip(encoded) {
  if (typeof DecompressionStream !== "function")
    throw new Error("this browser has no DecompressionStream to unpack them");
  let binary;
  try {
    binary = atob(encoded);
  } catch {
    throw new Error("their block is not base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  }).pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch {
    throw new Error("their block is not valid gzip-compressed UTF-8");
  }
}
