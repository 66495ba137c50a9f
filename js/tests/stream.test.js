import { describe, expect, test } from "vitest";
import { renderBlocks } from "../markdown.js";
import { BlockStream } from "../stream.js";

// Documents where settling is subtle: every prefix must render as a full render would.
const TRICKY = {
  "heading after a paragraph": "Foo\n#\n\nPara one\n# Heading\n\nPara two [1]\n",
  "ordered list grows across blank lines": "1. a\n\n2. b\n\n3. c\n\n2\n\nAfter the list.\n",
  "nested loose list": "- a\n  - b\n\n  c\n- d\n\ntext\n\n- e\n\n  - f\n",
  "definitions after their use": [
    "See [docs] and [x][y].",
    "",
    "More text [1].",
    "",
    '[docs]: https://example.org/docs "Docs"',
    "[y]: /relative",
    "",
    "End [docs] [y].",
    "",
  ].join("\n"),
  "definition title on the next line": "[a] and [b]\n\n[a]: /u\n'title\n\nstill'\n\n[b]: /v\n\nz\n",
  "fenced code with blank lines":
    "```js\nconst a = 1;\n\nconst b = [1];\n```\n\nAfter [1].\n\n~~~\nopen fence\n\n",
  tables: "| a | b |\n|:-:|--:|\n| 1 | 2 [3] |\n\n| c |\n\nnot | a table\n",
  "setext headings": "Title\n=====\n\nText\n---\n\nMore\n\n***\n\nLast",
  "indented code": "    code\n\n    more\n\ntext\n\n     deeper\n",
  blockquotes: "> quote\ncontinued\n\n> new\n\n>\n\nx",
  "crlf and cr": "a\r\n\r\nb\r\n\r\n- c\r\n- d\r\re\r\rf",
  citations:
    "Claim [1][2]. Range [2-4], list [1, 3].\n\nCode `[5]` link [1](http://x) foot [^1] ![2].\n",
  "raw html": "<script>alert(1)</script>\n\n<b>x</b> [1]\n\n<div>\n\nblock\n</div>\n",
  "emphasis across blocks": "**bold\n\ntext** and *more\n\n_x_\n",
  "list after heading without blank": "# H\n- a\n- b\n\n## H2\n1) x\n2) y\n\nend",
  "long paragraph then list": `${"word ".repeat(60)}\n\n- one [1]\n- two [2]\n\n${"more ".repeat(40)}`,
  "nul and odd whitespace": "a\u0000b\n\n \t\n\nc\u00a0[1]\n",
};

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
