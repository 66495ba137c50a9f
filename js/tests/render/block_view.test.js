import { describe, expect, test } from "vitest";
import { BlockView } from "../../render/block_view.js";
import { BlockStream } from "../../render/stream.js";
import { container } from "../helpers.js";

describe("block view", () => {
  test("a settled block keeps its element across token frames", () => {
    const root = container();
    const view = new BlockView(root);
    const stream = new BlockStream({ turn: "t1" });
    const answer =
      "# Title\n\nFirst paragraph with **bold** text.\n\n- one\n- two\n\nLast paragraph grows";
    view.update(stream.update(answer.slice(0, answer.indexOf("- one") + 6)));
    const heading = root.querySelector("h1");
    const paragraph = root.querySelector("p");
    const wrappers = view.elements;
    for (let end = answer.indexOf("- one") + 7; end <= answer.length; end++) {
      view.update(stream.update(answer.slice(0, end)));
    }
    expect(root.querySelector("h1")).toBe(heading);
    expect(root.querySelector("p")).toBe(paragraph);
    expect(view.elements[0]).toBe(wrappers[0]);
    expect(view.elements[1]).toBe(wrappers[1]);
    expect(root.querySelectorAll("p")).toHaveLength(2);
  });

  test("a selection inside a settled block survives later tokens", () => {
    const root = container();
    const view = new BlockView(root);
    const stream = new BlockStream();
    view.update(stream.update("Settled words here.\n\nTail\n"));
    const text = root.querySelector("p").firstChild;
    const range = document.createRange();
    range.setStart(text, 8);
    range.setEnd(text, 13);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    for (const more of ["Tail grows", "Tail grows on", "Tail grows on and on"]) {
      view.update(stream.update(`Settled words here.\n\n${more}`));
    }
    expect(selection.toString()).toBe("words");
    expect(selection.getRangeAt(0).startContainer).toBe(text);
  });

  test("only changed blocks are reported and rebuilt", () => {
    const root = container();
    const view = new BlockView(root);
    view.update([{ html: "<p>a</p>" }, { html: "<p>b</p>" }]);
    const first = view.elements[0].firstChild;
    const changed = view.update([
      { html: "<p>a</p>" },
      { html: "<p>bc</p>" },
      { html: "<p>d</p>" },
    ]);
    expect(changed).toEqual(view.elements.slice(1));
    expect(view.elements[0].firstChild).toBe(first);
    view.update([{ html: "<p>a</p>" }]);
    expect(root.querySelectorAll(".citelab-block")).toHaveLength(1);
  });

  test("blocks sit in chunks of 16, in order; empty chunks go away", () => {
    const root = container();
    const view = new BlockView(root);
    const blocks = (n) => Array.from({ length: n }, (_, i) => ({ html: `<p>${i}</p>` }));
    view.update(blocks(40));
    expect([...root.children].map((chunk) => chunk.children.length)).toEqual([16, 16, 8]);
    expect(root.textContent).toBe(Array.from({ length: 40 }, (_, i) => i).join(""));
    const kept = view.elements[20];
    view.update(blocks(17));
    expect([...root.children].map((chunk) => chunk.children.length)).toEqual([16, 1]);
    view.update(blocks(33));
    expect(view.elements[20]).not.toBe(kept); // removed blocks are gone, not cached
    expect(root.querySelectorAll(".citelab-block")).toHaveLength(33);
  });

  test("content is sanitized on the way into the page", () => {
    const root = container();
    new BlockView(root).update([{ html: '<p onclick="x()">a<script>alert(1)</script></p>' }]);
    expect(root.innerHTML).toBe(
      '<div class="citelab-chunk"><div class="citelab-block"><p>a</p></div></div>',
    );
  });
});
