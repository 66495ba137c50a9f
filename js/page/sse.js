// Server-Sent Events from a fetch body (EventSource cannot POST or send headers). Follows
// the HTML spec's parsing: lines end in \n, \r\n or \r; "data:" lines join with \n; a blank
// line dispatches; lines starting with ":" are comments.

/** @typedef {{event: string, data: string}} SseEvent */

/** Parse SSE text incrementally: `push(chunk)` returns the events completed by it. */
export class SseParser {
  constructor() {
    this.buffer = "";
    /** @type {string} */
    this.eventName = "";
    /** @type {string[]} */
    this.data = [];
  }

  reset() {
    this.eventName = "";
    this.data = [];
  }

  /**
   * @param {string} chunk
   * @returns {SseEvent[]}
   */
  push(chunk) {
    this.buffer += chunk;
    /** @type {SseEvent[]} */
    const events = [];
    const newline = /\r\n|\r|\n/g;
    let start = 0;
    for (;;) {
      newline.lastIndex = start;
      const match = newline.exec(this.buffer);
      if (!match) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more input.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(start, match.index);
      start = match.index + match[0].length;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * End of stream: a final lone \r still ends its line; an event without its blank line is
   * dropped, as the spec says. Returns the events the final line ending completed.
   * @returns {SseEvent[]}
   */
  finish() {
    const events = this.buffer.endsWith("\r") ? this.push("\n") : [];
    this.buffer = "";
    this.reset();
    return events;
  }

  /**
   * @param {string} line
   * @returns {SseEvent|null}
   */
  line(line) {
    if (line === "") {
      if (!this.data.length) {
        this.reset();
        return null;
      }
      const event = { event: this.eventName || "message", data: this.data.join("\n") };
      this.reset();
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventName = value;
    else if (field === "data") this.data.push(value);
    return null;
  }
}

/**
 * Read a fetch Response body as SSE, calling `onEvent({event, data})` for each.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(event: SseEvent) => void} onEvent
 */
export async function readSse(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const event of parser.push(decoder.decode(value, { stream: true }))) onEvent(event);
  }
  for (const event of parser.push(decoder.decode())) onEvent(event);
  for (const event of parser.finish()) onEvent(event);
}
