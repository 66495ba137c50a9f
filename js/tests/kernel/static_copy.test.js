// A live view hides the static copies of its own model, and only those.
import { describe, expect, test } from "vitest";
import { hideStaticCopies } from "../../kernel/static_copy.js";
import chatWidget from "../../entries/widget_chat.js";
import messageWidget from "../../entries/widget_message.js";
import sourcesWidget from "../../entries/widget_sources.js";
import { container, FakeModel } from "../helpers.js";

const KEY = "0123456789abcdef0123456789abcdef";
const OTHER = "fedcba9876543210fedcba9876543210";

// A JupyterLab output row holding a static copy, as the kernel's second output renders.
function staticCopy(key) {
  const row = container();
  row.className = "jp-OutputArea-child";
  row.innerHTML = `<div class="jp-OutputArea-output"><div class="citelab-static citelab-static-${key}"><p>Answer</p></div></div>`;
  return row.querySelector(".citelab-static");
}

function rules() {
  return [...document.head.querySelectorAll("style[id^='citelab-static-']")];
}

describe("hiding the static copy", () => {
  test("one rule per model hides its copies (and their output rows), not others", () => {
    const mine = staticCopy(KEY);
    const other = staticCopy(OTHER);
    expect(hideStaticCopies(document, KEY)).toBe(true);
    expect(hideStaticCopies(document, KEY)).toBe(true);
    const added = rules().filter((rule) => rule.id === `citelab-static-${KEY}`);
    expect(added).toHaveLength(1);
    expect(added[0].textContent).toContain(`.citelab-static-${KEY} {`);
    expect(added[0].textContent).toContain(`.jp-OutputArea-child:has(.citelab-static-${KEY})`);
    expect(getComputedStyle(mine).display).toBe("none");
    expect(getComputedStyle(other).display).not.toBe("none");
    // A copy the kernel rewrites is a new element: the rule hides it too.
    const rewritten = staticCopy(KEY);
    expect(getComputedStyle(rewritten).display).toBe("none");
  });

  test.each([
    ["no key", null],
    ["a number", 7],
    ["too short", "abc"],
    ["upper case", KEY.toUpperCase()],
    ["CSS that breaks out", `${KEY.slice(0, 31)}} body { display: none } .x {`],
    ["a selector list", `${KEY}, body`],
  ])("%s: no rule", (_name, key) => {
    const before = rules().length;
    expect(hideStaticCopies(document, key)).toBe(false);
    expect(rules()).toHaveLength(before);
  });
});

describe("every widget's render hides its copies", () => {
  test.each([
    ["chat", chatWidget, "a", { turns: [], placeholder: "Ask", show_sources: true }],
    ["sources", sourcesWidget, "b", { turns: [], heading: "Sources" }],
    ["message", messageWidget, "d", { message: null, violations: [] }],
  ])("%s", (_name, widget, digit, traits) => {
    const key = digit.repeat(32);
    const model = new FakeModel({ ...traits, _model_key: key });
    const cleanup = widget.initialize({ model });
    const dispose = widget.render({ model, el: container() });
    expect(document.getElementById(`citelab-static-${key}`)?.localName).toBe("style");
    // The widgets keep their state per model key in module scope: drop it, as JupyterLab
    // does when the widget closes, so no later test meets this key's state.
    dispose?.();
    cleanup?.();
  });
});
