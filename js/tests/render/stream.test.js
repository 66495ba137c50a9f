import { describe, expect, test } from "vitest";
import { renderBlocks } from "../../render/markdown.js";
import { BlockStream } from "../../render/stream.js";
import { TRICKY } from "../helpers.js";

function streamEveryPrefix(text, turn = "t1") {
  const stream = new BlockStream({ turn });
  for (let end = 0; end <= text.length; end++) {
    const prefix = text.slice(0, end);
    const streamed = stream.update(prefix).map((block) => block.html);
    const full = renderBlocks(prefix, { turn });
    if (streamed.join("") !== full.join("")) {
      return { at: end, prefix, streamed, full };
    }
  }
  return { stream };
}

describe("streaming one character at a time equals a full render of every prefix", () => {
  test.each(Object.entries(TRICKY))("%s", (_name, text) => {
    const result = streamEveryPrefix(text);
    expect(result.at, JSON.stringify(result.prefix)).toBeUndefined();
  });

  test("block boundaries match too, not only the joined HTML", () => {
    for (const text of Object.values(TRICKY)) {
      const stream = new BlockStream({ turn: "t1" });
      const blocks = stream.update(text).map((block) => block.html);
      expect(blocks).toEqual(renderBlocks(text, { turn: "t1" }));
    }
  });

  test("random chunk sizes give the same result", () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const text of Object.values(TRICKY)) {
      const stream = new BlockStream({ turn: "t1" });
      let end = 0;
      while (end < text.length) {
        end = Math.min(text.length, end + 1 + Math.floor(random() * 12));
        const got = stream.update(text.slice(0, end)).map((block) => block.html);
        expect(got).toEqual(renderBlocks(text.slice(0, end), { turn: "t1" }));
      }
    }
  });
});

describe("extending by pieces", () => {
  test.each(Object.entries(TRICKY))("%s: extend equals update, piece by piece", (_name, text) => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const extended = new BlockStream({ turn: "t1" });
    for (let end = 0; end < text.length; ) {
      const next = Math.min(text.length, end + 1 + Math.floor(random() * 9));
      const got = extended.extend(text.slice(end, next)).map((block) => block.html);
      expect(got).toEqual(renderBlocks(text.slice(0, next), { turn: "t1" }));
      end = next;
    }
  });

  test("an update after extending still tells an extension from a new text", () => {
    const stream = new BlockStream();
    stream.extend("Fees are due ");
    stream.extend("in May [2].");
    stream.update("Fees are due in May [1]."); // the final text, renumbered: not an extension
    expect(stream.blocks.map((block) => block.html).join("")).toBe(
      renderBlocks("Fees are due in May [1].").join(""),
    );
  });
});

describe("settling", () => {
  test("a definition written later re-renders the settled block that uses it", () => {
    const text = TRICKY["definitions after their use"];
    const stream = new BlockStream({ turn: "t1" });
    stream.update(text.slice(0, text.indexOf("[docs]:")));
    expect(stream.settled.length).toBeGreaterThan(0);
    expect(stream.blocks[0].html).not.toContain("<a href");
    stream.update(text);
    expect(stream.blocks[0].html).toContain(
      '<a href="https://example.org/docs" title="Docs">docs</a>',
    );
    expect(stream.stats.resets).toBeGreaterThan(0);
  });

  test("settled blocks are the same objects after later tokens", () => {
    const stream = new BlockStream();
    stream.update("# Title\n\nFirst paragraph.\n\nSecond\n");
    const [title, first] = stream.blocks;
    stream.update("# Title\n\nFirst paragraph.\n\nSecond\ngrows.\n\nThird");
    expect(stream.blocks[0]).toBe(title);
    expect(stream.blocks[1]).toBe(first);
  });

  test("the parsed tail does not grow with the answer", () => {
    const paragraph = "A sentence about sources [1] with *some* emphasis and `code`. ".repeat(4);
    const text = Array.from({ length: 120 }, (_, i) =>
      i % 10 === 5 ? "- item\n- item [2]" : paragraph,
    ).join("\n\n");
    const stream = new BlockStream();
    const tails = [];
    for (let end = 0; end <= text.length; end += 13) {
      stream.update(text.slice(0, end));
      tails.push(stream.tailText.length);
    }
    const longest = Math.max(...tails.slice(tails.length / 2));
    expect(text.length).toBeGreaterThan(25_000);
    expect(longest).toBeLessThan(3 * paragraph.length);
    expect(stream.stats.resets).toBe(0);
  });

  test("text that is not an extension starts over", () => {
    const stream = new BlockStream({ turn: "t1" });
    stream.update("Old answer [3].\n\nMore old text.\n\nTail");
    const blocks = stream.update("New answer [1].").map((block) => block.html);
    expect(blocks).toEqual(renderBlocks("New answer [1].", { turn: "t1" }));
  });
});

describe("generated documents", () => {
  // Lines assembled from Markdown's sharp edges: list markers, fences, setext underlines,
  // definitions and their uses, markers, brackets, indentation, blank lines.
  const PIECES = [
    "- ",
    "1. ",
    "2) ",
    "  - ",
    "   1. ",
    "# ",
    "```",
    "~~~",
    "> ",
    "    ",
    "  ",
    "\t",
  ]
    .concat([
      "| a | b |",
      "|---|---|",
      "[x]: /u",
      "[y]: /v 'T'",
      "[x]",
      "[Y]",
      "[1]",
      "[2-3]",
      "[1][2]",
    ])
    .concat([
      "text",
      "*em",
      "**",
      "_",
      "`",
      "***",
      "===",
      "---",
      "<b>",
      "\\",
      "[",
      "]",
      "(",
      ")",
      "!",
      ":",
    ]);

  test("40 seeded documents, every prefix", () => {
    let seed = 2024;
    const pick = (n) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let doc = 0; doc < 40; doc++) {
      let text = "";
      for (let line = 0, lines = 3 + pick(12); line < lines; line++) {
        for (let part = 0, parts = pick(4); part < parts; part++) {
          text += PIECES[pick(PIECES.length)] + (pick(3) === 0 ? " " : "");
        }
        text += pick(3) === 0 ? "\n\n" : "\n";
      }
      const result = streamEveryPrefix(text);
      expect(result.at, JSON.stringify(result.prefix)).toBeUndefined();
    }
  });
});
