// The text-append step of streaming: when it applies, and that it always gives the DOM the
// full path (sanitize + morph) would give.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { appendedText, appendToBlock } from "../../render/append.js";
import { BlockView } from "../../render/block_view.js";
import { sanitizeBlock } from "../../render/sanitize.js";
import { BlockStream } from "../../render/stream.js";
import { container, TRICKY } from "../helpers.js";

describe("appendedText", () => {
  test.each([
    ["<p>Rooms</p>\n", "<p>Rooms open</p>\n", { text: " open", path: ["p"] }],
    ["<p>a <strong>b</strong></p>\n", "<p>a <strong>b</strong> c</p>\n", { text: " c", path: ["p"] }],
    [
      "<ul>\n<li>one</li>\n<li>tw</li>\n</ul>\n",
      "<ul>\n<li>one</li>\n<li>two more</li>\n</ul>\n",
      { text: "o more", path: ["ul", "li"] },
    ],
    [
      "<pre><code>a\n</code></pre>\n",
      "<pre><code>a\nb\n</code></pre>\n",
      { text: "b\n", path: ["pre", "code"] },
    ],
    ["<h2>Sect</h2>\n", "<h2>Section 6</h2>\n", { text: "ion 6", path: ["h2"] }],
    ["<p><em>a</em></p>\n", "<p><em>ab</em></p>\n", { text: "b", path: ["p", "em"] }],
  ])("%j + text", (before, after, expected) => {
    expect(appendedText(before, after)).toEqual(expected);
  });

  test.each([
    ["no previous HTML", null, "<p>a</p>\n"],
    ["not longer", "<p>ab</p>\n", "<p>ac</p>\n"],
    ["markup added", "<p>a</p>\n", '<p>a [<a href="#x">1</a>]</p>\n'],
    ["an entity added", "<p>a</p>\n", "<p>a &amp; b</p>\n"],
    ["a NUL added", "<p>a</p>\n", "<p>a\u0000</p>\n"],
    ["a CR added", "<p>a</p>\n", "<p>a\r</p>\n"],
    ["a change in the middle", "<p>a *b</p>\n", "<p>a <em>b</em></p>\n"],
    ["no closing tag at the end", "a", "ab"],
    // Text in a table row is moved out of the table by the parser: never append there.
    ["text into a table row", "<table><tr></tr></table>", "<table><tr>x</tr></table>"],
    ["text right after <pre>", "<pre></pre>", "<pre>\nx</pre>"],
  ])("none: %s", (_name, before, after) => {
    expect(appendedText(before, after)).toBeNull();
  });
});

describe("sanitizeBlock: untouched only when the sanitizer removed nothing", () => {
  test.each([
    ["a paragraph with a citation", '<p>Fees [<a href="#c-1" data-ref-index="1">1</a>].</p>\n'],
    ["a list", "<ul>\n<li>a <code>b</code></li>\n</ul>\n"],
    ["a table", '<table><thead><tr><th data-align="left">a</th></tr></thead></table>\n'],
    ["an outside link", '<p><a href="https://uni.example/">x</a></p>\n'],
  ])("%s: untouched", (_name, html) => {
    expect(sanitizeBlock(html).untouched).toBe(true);
  });

  test.each([
    ["an element", "<p>a<img src=x></p>"],
    ["an event handler", '<p onclick="x()">a</p>'],
    ["a disallowed scheme", '<p><a href="javascript:alert(1)">a</a></p>'],
    ["an attribute of another tag", '<p class="x">a</p>'],
    ["a comment", "<p>a<!-- b --></p>"],
    ["attributes on the body", "<body onload=alert(1)><p>a</p>"],
  ])("%s removed: touched", (_name, html) => {
    expect(sanitizeBlock(html).untouched).toBe(false);
  });
});

describe("appendToBlock", () => {
  test("appends to the last text node, or adds one after an element", () => {
    const block = container();
    block.innerHTML = "<ul><li>one</li><li>tw</li></ul>";
    const text = block.querySelectorAll("li")[1].firstChild;
    expect(appendToBlock(block, { text: "o", path: ["ul", "li"] })).toBe(true);
    expect(block.querySelectorAll("li")[1].firstChild).toBe(text);
    expect(text.data).toBe("two");
    block.innerHTML = "<p>a <strong>b</strong></p>";
    expect(appendToBlock(block, { text: " c", path: ["p"] })).toBe(true);
    expect(block.innerHTML).toBe("<p>a <strong>b</strong> c</p>");
  });

  test("refuses, changing nothing, when the block has no such place", () => {
    const block = container();
    block.innerHTML = "<p>a</p>";
    expect(appendToBlock(block, { text: "x", path: ["ul", "li"] })).toBe(false);
    expect(appendToBlock(block, { text: "x", path: ["p", "em"] })).toBe(false);
    expect(block.innerHTML).toBe("<p>a</p>");
  });
});

// Serialize what the full path shows for one block's HTML.
function fullPath(html) {
  const box = document.createElement("div");
  box.append(sanitizeBlock(html).fragment);
  return box.innerHTML;
}

function randomPieces(text, seed) {
  const pieces = [];
  let state = seed;
  for (let at = 0; at < text.length; ) {
    state = (state * 48271) % 2147483647;
    const size = 1 + (state % 24);
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const ANSWER = [
  "Rooms open at **eight** [1]. The `desk` answers questions [2][3].",
  "- Book a room [1]\n- Bring a card, then wait for the confirmation [2]",
  "| Room | Seats |\n|:--|--:|\n| R1 | 4 [1] |\n| R2 | 6 |",
  "```\nbook --room R2\n\nbook --list\n```",
  "## Evening hours\n\nLate opening in exam weeks [3], quiet floors *all day*.",
].join("\n\n");

describe("BlockView with appended text equals the full path", () => {
  test.each([["answer", ANSWER], ...Object.entries(TRICKY)])(
    "%s, in random pieces",
    (_name, text) => {
      for (const seed of [3, 11]) {
        const view = new BlockView(container());
        const stream = new BlockStream({ turn: "t1" });
        for (const piece of randomPieces(text, seed)) {
          const blocks = stream.extend(piece);
          view.update(blocks);
          blocks.forEach(({ html }, index) => {
            expect(view.elements[index].innerHTML).toBe(fullPath(html));
          });
        }
      }
    },
  );

  test("the hostile vectors of fixtures/xss_vectors.json, streamed in small pieces", () => {
    const path = join(import.meta.dirname, "..", "..", "..", "fixtures", "xss_vectors.json");
    const { vectors } = JSON.parse(readFileSync(path, "utf8"));
    expect(vectors.length).toBeGreaterThanOrEqual(30);
    const view = new BlockView(container());
    const stream = new BlockStream({ turn: "t1" });
    for (const piece of randomPieces(`${vectors.join(" and more words\n\n")} end`, 9)) {
      const blocks = stream.extend(piece);
      view.update(blocks);
      blocks.forEach(({ html }, index) => {
        expect(view.elements[index].innerHTML).toBe(fullPath(html));
      });
    }
    expect(view.stats.appended).toBeGreaterThan(0);
    expect(view.container.querySelector("script, img, svg, iframe, [onerror], [onload]")).toBeNull();
  });

  test("appending is what most small updates do", () => {
    const view = new BlockView(container());
    const stream = new BlockStream({ turn: "t1" });
    const pieces = randomPieces(ANSWER, 5);
    for (const piece of pieces) view.update(stream.extend(piece));
    expect(view.stats.appended).toBeGreaterThan(pieces.length / 4);
  });

  test("a block the sanitizer changed always takes the full path", () => {
    const root = container();
    const view = new BlockView(root);
    view.update([{ html: "<p>a<img src=x onerror=alert(1)></p>\n" }]);
    view.update([{ html: "<p>a<img src=x onerror=alert(1)> more</p>\n" }]);
    expect(view.stats.appended).toBe(0);
    expect(root.querySelector("p").innerHTML).toBe("a more");
    view.update([{ html: "<p>a<img src=x onerror=alert(1)> more<script>x()</script></p>\n" }]);
    expect(root.querySelector("script, img")).toBeNull();
  });

  test("text the parser moves out of a table goes where the full path puts it", () => {
    const root = container();
    const view = new BlockView(root);
    const table = "<table><tbody><tr><td>a</td></tr></tbody></table>\n";
    view.update([{ html: table }]);
    const grown = table.replace("</td>", "</td>x");
    view.update([{ html: grown }]);
    expect(view.stats.appended).toBe(0);
    expect(view.elements[0].innerHTML).toBe(fullPath(grown));
  });
});
