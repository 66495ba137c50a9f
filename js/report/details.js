// The rest of each case of the browser: one JSON line per turn, optionally packed in
// gzip-compressed base64 blocks, read only when a turn is first opened (see case_browser.js).

const UNREADABLE = "the details of this turn could not be read";

export class Details {
  // `source`: the text, or a function giving it (or the promise of it); `packing`: the
  // packing, or a function giving it (both are read when a turn is first opened).
  constructor(source, packing) {
    this.source = source;
    this.packing = packing;
    this.lines = null; // the plain lines, or the packed blocks
    this.blocks = new Map(); // block number → its lines, or the promise of them
  }

  /** The entry at `index` with its details: now when they are at hand (or there are none),
   * else a promise of it (the page is still being read, or its block decompressed). */
  of(entry, index) {
    if (this.lines === null) {
      let text;
      try {
        text = typeof this.source === "function" ? this.source() : this.source;
      } catch (error) {
        return failed(entry, error.message);
      }
      if (typeof text?.then === "function") {
        // Still on its way (the page is being parsed): read it once it is there.
        this.waiting ??= text.then((arrived) => {
          this.source = arrived;
        });
        return this.waiting.then(
          () => this.of(entry, index),
          (error) => failed(entry, error.message),
        );
      }
      if (typeof text !== "string") return entry;
      this.read(text);
    }
    if (this.unknown) return failed(entry, `unknown encoding ${this.unknown}`);
    if (!this.packed) return merged(entry, this.lines[index]);
    const number = Math.floor(index / this.block);
    const offset = index - number * this.block;
    const known = this.blocks.get(number);
    if (Array.isArray(known)) return merged(entry, known[offset]);
    let pending = known;
    if (pending === undefined) {
      pending = gunzip(this.lines[number] ?? "").then((text) => {
        const lines = text.split("\n");
        this.blocks.set(number, lines);
        return lines;
      });
      this.blocks.set(number, pending);
    }
    return pending.then(
      (lines) => merged(entry, lines[offset]),
      (error) => failed(entry, error.message),
    );
  }

  read(text) {
    const packing = typeof this.packing === "function" ? this.packing() : this.packing;
    const encoding = packing?.encoding ?? "";
    this.packed = encoding === "gzip+base64";
    this.unknown = encoding && !this.packed ? String(encoding) : "";
    this.block = Math.max(1, Math.trunc(Number(packing?.block)) || 1);
    this.lines = text.split("\n");
  }
}

function failed(entry, why) {
  return { ...entry, e: entry.e ?? `${UNREADABLE} (${why})` };
}

function merged(entry, line) {
  try {
    return { ...JSON.parse(line ?? "{}"), ...entry };
  } catch {
    return { ...entry, e: entry.e ?? UNREADABLE };
  }
}

/** The text of base64 `encoded` gzip data, decompressed by the browser's own stream. */
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
