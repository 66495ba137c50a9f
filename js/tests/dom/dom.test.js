import { describe, expect, test } from "vitest";
import { questionForm, submitOnEnter } from "../../dom/forms.js";
import { frameSlices, SLICE_MS } from "../../dom/frames.js";
import { container } from "../helpers.js";

// A form as the chat builds it, recording its submits and the keydowns that reach the page.
function form({ textarea = false } = {}) {
  const built = questionForm(document, {
    className: "f",
    label: "Question",
    placeholder: "",
    button: "Ask",
  });
  const submits = [];
  built.form.addEventListener("submit", (event) => {
    event.preventDefault();
    submits.push(built.form.querySelector("input, textarea").value);
  });
  let input = built.input;
  if (textarea) {
    input = document.createElement("textarea");
    built.input.replaceWith(input);
    submitOnEnter(input);
  }
  const root = container();
  root.append(built.form);
  const reached = []; // what the notebook's shortcut handler (on the document) would see
  const onKey = (event) => reached.push(event.key + (event.shiftKey ? "+shift" : ""));
  document.addEventListener("keydown", onKey);
  const press = (key, options = {}) => {
    const init = { key, bubbles: true, cancelable: true, ...options };
    const event = new KeyboardEvent("keydown", init);
    input.dispatchEvent(event);
    return event;
  };
  const done = () => document.removeEventListener("keydown", onKey);
  return { input, submits, reached, press, done };
}

describe("Enter in a question box", () => {
  test("Enter submits the form, and the notebook does not see the key", () => {
    const box = form();
    box.input.value = "When are fees due?";
    const event = box.press("Enter");
    expect(box.submits).toEqual(["When are fees due?"]);
    expect(event.defaultPrevented).toBe(true);
    expect(box.reached).toEqual([]);
    box.done();
  });

  test("Shift+Enter adds a newline in a textarea, nothing in a one-line input; no submit", () => {
    const area = form({ textarea: true });
    const inArea = area.press("Enter", { shiftKey: true });
    expect(inArea.defaultPrevented).toBe(false); // the browser inserts the newline
    expect(area.submits).toEqual([]);
    expect(area.reached).toEqual([]); // and the notebook does not run the cell
    area.done();
    const line = form();
    const inLine = line.press("Enter", { shiftKey: true });
    expect(inLine.defaultPrevented).toBe(true);
    expect(line.submits).toEqual([]);
    expect(line.reached).toEqual([]);
    line.done();
  });

  test("Enter in a textarea submits too", () => {
    const area = form({ textarea: true });
    area.input.value = "two\nlines";
    area.press("Enter");
    expect(area.submits).toEqual(["two\nlines"]);
    area.done();
  });

  test("composing text (an input method) and modified keys are left alone", () => {
    const box = form();
    const composing = box.press("Enter", { isComposing: true });
    const ime = box.press("Enter", { keyCode: 229 });
    const ctrl = box.press("Enter", { ctrlKey: true });
    const other = box.press("a");
    expect(box.submits).toEqual([]);
    for (const event of [composing, ime, ctrl, other]) expect(event.defaultPrevented).toBe(false);
    expect(box.reached).toEqual(["Enter", "Enter", "Enter", "a"]);
    box.done();
  });
});

test("ids from two copies of the module (two bundles in one page) never collide", async () => {
  const { uniqueId: first } = await import("../../dom/nodes.js?copy=1");
  const { uniqueId: second } = await import("../../dom/nodes.js?copy=2");
  expect(first).not.toBe(second); // two module instances, each with its own counter
  const ids = [first("citelab-src"), second("citelab-src"), first("citelab-src")];
  expect(new Set(ids).size).toBe(3);
  for (const id of ids) expect(id).toMatch(/^citelab-src-[a-z0-9]{6}-\d+$/);
});

describe("frameSlices", () => {
  // A window whose frames and clock the test drives.
  function fakeWindow() {
    const frames = new Map();
    let next = 1;
    const win = {
      now: 0,
      performance: { now: () => win.now },
      requestAnimationFrame: (run) => {
        frames.set(next, run);
        return next++;
      },
      cancelAnimationFrame: (id) => frames.delete(id),
      frame: () => {
        const due = [...frames.values()];
        frames.clear();
        for (const run of due) run();
      },
      get queued() {
        return frames.size;
      },
    };
    return win;
  }

  test("one slice per frame from the next frame on, each about SLICE_MS, until done", () => {
    const win = fakeWindow();
    const slices = [];
    frameSlices((hasTime) => {
      let units = 0;
      do {
        units += 1;
        win.now += 0.5;
      } while (hasTime());
      slices.push(units);
      return slices.length === 3;
    }, win);
    expect(slices).toEqual([]); // nothing in the frame that asked
    win.frame();
    expect(slices).toEqual([SLICE_MS / 0.5]);
    win.frame();
    win.frame();
    expect(slices).toHaveLength(3);
    expect(win.queued).toBe(0); // done: no more frames asked for
  });

  test("a slice stops before a step as long as its longest would run over", () => {
    const win = fakeWindow();
    const steps = [0.3, 0.9, 0.4, 0.5, 0.2];
    const done = [];
    frameSlices((hasTime) => {
      while (steps.length) {
        win.now += steps.shift();
        done.push(win.now);
        if (!hasTime()) break;
      }
      return steps.length === 0;
    }, win);
    win.frame();
    // 0.3, then 0.9 (ends at 1.2): another 0.9 would end at 2.1, over SLICE_MS (2).
    expect(done).toEqual([0.3, 1.2].map((t) => expect.closeTo(t, 9)));
    win.frame(); // 0.4, 0.5 and 0.2 fit in the next one
    expect(done).toHaveLength(5);
  });

  test("cancelling stops the slices still to come", () => {
    const win = fakeWindow();
    let runs = 0;
    const cancel = frameSlices(() => {
      runs += 1;
      return false;
    }, win);
    win.frame();
    cancel();
    win.frame();
    win.frame();
    expect(runs).toBe(1);
    expect(win.queued).toBe(0);
  });
});
