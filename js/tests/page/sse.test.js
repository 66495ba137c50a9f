import { describe, expect, test } from "vitest";
import { readSse, SseParser } from "../../page/sse.js";

describe("SSE parsing", () => {
  test("events split anywhere across chunks, any line ending", () => {
    const wire =
      'event: token\ndata: {"text":"a"}\n\nevent: done\r\ndata: {"text":"ab"}\r\n\r\n: keep-alive\n\nevent: token\rdata: x\r\r';
    for (let size = 1; size <= wire.length; size++) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < wire.length; i += size)
        events.push(...parser.push(wire.slice(i, i + size)));
      events.push(...parser.finish());
      expect(events).toEqual([
        { event: "token", data: '{"text":"a"}' },
        { event: "done", data: '{"text":"ab"}' },
        { event: "token", data: "x" },
      ]);
    }
  });

  test("multi-line data joins with newlines; fields without a space; unknown fields ignored", () => {
    const parser = new SseParser();
    expect(parser.push("data:one\ndata: two\nid: 7\nretry: 10\nevent:x\n\n")).toEqual([
      { event: "x", data: "one\ntwo" },
    ]);
  });

  test("a blank line with no data dispatches nothing; an unterminated event is dropped", () => {
    const parser = new SseParser();
    expect(parser.push("event: token\n\n")).toEqual([]);
    expect(parser.push("data: partial")).toEqual([]);
    expect(parser.finish()).toEqual([]);
    expect(parser.push("\n\n")).toEqual([]);
  });

  test("reads a fetch body stream with UTF-8 split inside a character", async () => {
    const bytes = new TextEncoder().encode('event: token\ndata: {"text":"😀é"}\n\n');
    const body = new ReadableStream({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events = [];
    await readSse(body, (event) => events.push(event));
    expect(events).toEqual([{ event: "token", data: '{"text":"😀é"}' }]);
  });
});
