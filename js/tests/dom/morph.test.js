import { describe, expect, test } from "vitest";
import { BlockView } from "../../render/block_view.js";
import { morphChildren } from "../../dom/morph.js";
import { BlockStream } from "../../render/stream.js";
import { container, TRICKY } from "../helpers.js";

function fragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return template.content;
}

function morphed(from, to) {
  const target = document.createElement("div");
  target.innerHTML = from;
  morphChildren(target, fragment(to));
  return target;
}

// Snippets shaped like sanitized Markdown blocks, to morph any one into any other.
const SNIPPETS = [
  "",
  "<p>Fees are due</p>",
  '<p>Fees are due in May <a data-ref-index="1" data-ref-turn="t1">1</a>.</p>',
  "<p>Fees are <strong>due</strong> in May</p>",
  "<p>Fees **are due</p>",
  "<ul><li>one</li><li>two</li></ul>",
  "<ul><li>one</li></ul><p>after</p>",
  '<ol start="2"><li>b</li></ol>',
  "<h2>Title</h2>",
  "<pre><code>book --room R2\n\nbook --list</code></pre>",
  '<table><thead><tr><th data-align="left">a</th></tr></thead>' +
    "<tbody><tr><td>1</td></tr></tbody></table>",
  "text only",
  "<p>a<br>b</p>",
];

describe("morphing an element's content", () => {
  test("any snippet becomes any other, exactly", () => {
    for (const from of SNIPPETS) {
      for (const to of SNIPPETS) {
        expect(morphed(from, to).innerHTML, `${from} → ${to}`).toBe(to);
      }
    }
  });

  test("a grown paragraph keeps its nodes and gets the characters appended", () => {
    const target = document.createElement("div");
    target.innerHTML = "<p>Fees are <strong>due</strong> in</p>";
    const paragraph = target.firstChild;
    const tail = paragraph.lastChild;
    const appended = [];
    new MutationObserver((records) => {
      for (const record of records) appended.push([record.type, record.target.data]);
    }).observe(target, { subtree: true, characterData: true, childList: true });
    morphChildren(target, fragment("<p>Fees are <strong>due</strong> in May</p>"));
    expect(target.firstChild).toBe(paragraph);
    expect(paragraph.lastChild).toBe(tail);
    expect(tail.data).toBe(" in May");
    return Promise.resolve().then(() => {
      expect(appended).toEqual([["characterData", " in May"]]); // nothing else was touched
    });
  });

  test("attributes are added, changed and removed to match", () => {
    const target = morphed(
      '<ol start="2" class="x"><li>a</li></ol>',
      '<ol start="3" reversed=""><li>a</li></ol>',
    );
    expect(target.innerHTML).toBe('<ol start="3" reversed=""><li>a</li></ol>');
  });
});

describe("streaming into blocks that morph", () => {
  // The DOM after every prefix equals a view built fresh from that prefix.
  function firstMismatch(text) {
    const live = new BlockView(container());
    const stream = new BlockStream({ turn: "t1" });
    for (let end = 0; end <= text.length; end++) {
      const prefix = text.slice(0, end);
      live.update(stream.update(prefix));
      const fresh = new BlockView(document.createElement("div"));
      fresh.update(new BlockStream({ turn: "t1" }).update(prefix));
      if (live.container.innerHTML !== fresh.container.innerHTML) return prefix;
    }
    return null;
  }

  test.each(Object.entries(TRICKY))("%s", (_name, text) => {
    expect(firstMismatch(text)).toBeNull();
  });

  test("a selection inside the growing tail survives the next tokens", () => {
    const root = container();
    const view = new BlockView(root);
    const stream = new BlockStream();
    view.update(stream.update("Settled.\n\nThe tail grows"));
    const text = root.querySelectorAll("p")[1].firstChild;
    const range = document.createRange();
    range.setStart(text, 4);
    range.setEnd(text, 8);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    view.update(stream.update("Settled.\n\nThe tail grows on"));
    view.update(stream.update("Settled.\n\nThe tail grows on and on"));
    expect(selection.toString()).toBe("tail");
    expect(root.querySelectorAll("p")[1].firstChild).toBe(text);
  });
});
