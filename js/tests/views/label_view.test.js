// The labelling view: the keys and buttons, what reaches the notebook, focus across pairs,
// the cited span marked, untrusted text shown as text, verdicts after the label.
import { afterEach, describe, expect, test } from "vitest";
import { LabelState } from "../../state/label_state.js";
import { DECISIONS, estimateText, keyAction, LabelView, verdictText } from "../../views/label_view.js";

const PASSAGE = "Tuition fees are due in May. Late payment costs a fee of 50 euros.";
const HOSTILE = '<img src=x onerror="window.hacked=1">Fees & <script>window.hacked=2</script>';

function pair(id = "p1", fields = {}) {
  return {
    id,
    claim: "Late payment costs 50 euros.",
    passages: [
      {
        number: 2,
        title: "Fees",
        uri: "entity:page/fees",
        text: PASSAGE,
        cited_spans: [{ text: "Late payment costs a fee of 50 euros.", start: 29, end: 66 }],
      },
    ],
    context: [
      ["question", "What does late payment cost?"],
      ["case", "fees-1"],
    ],
    verdicts: [],
    ...fields,
  };
}

const mounted = [];

/** A view over a state the test sets, with a host that records and answers requests. */
function setup(traits = {}) {
  const state = new LabelState();
  const sent = [];
  const send = (message) => sent.push(message);
  const values = {
    item: pair(),
    progress: { decided: 3, wanted: 10, skipped: 1, judges: [] },
    last: null,
    notices: [],
    file_name: "labels.jsonl",
    show_verdicts: "after",
    ...traits,
  };
  state.read((name) => values[name]);
  const root = document.createElement("div");
  document.body.append(root);
  mounted.push(root);
  const view = new LabelView(root, state, {
    label: (id, label) => state.request({ type: "label", id, label }, send),
    undo: () => state.request({ type: "undo" }, send),
  });
  state.subscribe(() => view.draw());
  /** The kernel: new traits, then the ack of the request waiting. */
  const kernel = (changes, error) => {
    Object.assign(values, changes);
    state.read((name) => values[name]);
    state.changed();
    const request = sent.at(-1);
    state.receive({ type: "ack", request_id: request.request_id, ...(error ? { error } : {}) });
  };
  const section = root.querySelector("section.citelab-labeller");
  return { state, view, root, section, sent, kernel, values };
}

function press(target, key, init = {}) {
  const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

const settle = () => new Promise((resolve) => setTimeout(resolve));

afterEach(() => {
  for (const root of mounted.splice(0)) root.remove();
  delete window.hacked;
});

describe("keys", () => {
  test("numbers and letters choose a label, U and Backspace undo, others nothing", () => {
    const cases = {
      1: "supported",
      y: "supported",
      Y: "supported",
      2: "partially_supported",
      p: "partially_supported",
      3: "not_supported",
      n: "not_supported",
      s: "skip",
      4: "skip",
      u: "undo",
      Backspace: "undo",
      x: null,
      Enter: null,
      " ": null,
      5: null,
    };
    for (const [key, action] of Object.entries(cases)) {
      expect(keyAction({ key }), key).toBe(action);
    }
    expect(keyAction({ key: "1", ctrlKey: true })).toBe(null);
    expect(keyAction({ key: "1", metaKey: true })).toBe(null);
    expect(keyAction({ key: "n", altKey: true })).toBe(null);
    expect(keyAction({ key: "n", isComposing: true })).toBe(null);
  });

  test("a key labels the pair shown; the notebook never sees labelling keys", async () => {
    const { section, sent } = setup();
    const reached = [];
    const outside = (event) => reached.push(event.key);
    document.addEventListener("keydown", outside);
    try {
      const event = press(section, "2");
      expect(event.defaultPrevented).toBe(true);
      expect(sent).toEqual([
        { type: "label", id: "p1", label: "partially_supported", request_id: sent[0].request_id },
      ]);
      press(section, "d"); // the notebook's "D D" would delete the cell
      press(section, "Tab"); // moves the focus as usual
      press(section, "Escape");
      press(section, "s", { ctrlKey: true }); // the notebook's save
      expect(reached).toEqual(["Tab", "Escape", "s"]);
    } finally {
      document.removeEventListener("keydown", outside);
    }
  });

  test("one request at a time: keys wait for the kernel's ack; held keys label once", async () => {
    const { section, sent, kernel } = setup();
    press(section, "1");
    press(section, "3"); // before the kernel answered
    press(section, "3", { repeat: true });
    expect(sent.map((m) => m.label)).toEqual(["supported"]);
    expect(section.getAttribute("aria-busy")).toBe("true");
    kernel({ item: pair("p2"), progress: { decided: 4, wanted: 10, skipped: 1 } });
    await settle();
    expect(section.getAttribute("aria-busy")).toBe("false");
    press(section, "3", { repeat: true });
    expect(sent).toHaveLength(1);
    press(section, "n");
    expect(sent.map((m) => [m.id, m.label])).toEqual([
      ["p1", "supported"],
      ["p2", "not_supported"],
    ]);
  });

  test("undo asks the kernel only when there is a label to take back", async () => {
    const { section, sent, kernel, root } = setup();
    const undo = root.querySelector(".citelab-labeller-undo");
    expect(undo.getAttribute("aria-disabled")).toBe("true");
    press(section, "u");
    expect(sent).toEqual([]);
    press(section, "1");
    kernel({
      item: pair("p2"),
      last: { id: "p1", label: "supported", claim: "c", verdicts: [] },
    });
    await settle();
    expect(undo.getAttribute("aria-disabled")).toBe("false");
    const event = press(section, "Backspace");
    expect(event.defaultPrevented).toBe(true);
    expect(sent.at(-1)).toEqual({ type: "undo", request_id: sent.at(-1).request_id });
    kernel({ item: pair("p1"), last: null });
    await settle();
    expect(root.querySelector('[role="status"]').textContent).toContain("taken back");
  });
});

describe("buttons and focus", () => {
  test("each decision has a button with its shortcut shown and declared", () => {
    const { root } = setup();
    const buttons = [...root.querySelectorAll(".citelab-labeller-actions button")];
    expect(buttons.map((b) => b.textContent.trim())).toEqual([
      "1 Supported",
      "2 Partly",
      "3 Not supported",
      "S Skip",
      "U Undo last",
    ]);
    expect(buttons.map((b) => b.getAttribute("aria-keyshortcuts"))).toEqual([
      "1 Y",
      "2 P",
      "3 N",
      "S 4",
      "U",
    ]);
    expect(buttons.every((b) => b.type === "button")).toBe(true);
    expect(root.querySelector(".citelab-labeller-keys").textContent).toContain(
      "1 or Y supported · 2 or P partly supported · 3 or N not supported · S or 4 skipped",
    );
    const section = root.querySelector("section");
    expect(section.tabIndex).toBe(0);
    expect(document.getElementById(section.getAttribute("aria-describedby"))).toBe(
      root.querySelector(".citelab-labeller-keys"),
    );
    expect(DECISIONS.map((d) => d.label)).toEqual([
      "supported",
      "partially_supported",
      "not_supported",
      "skip",
    ]);
  });

  test("a clicked button keeps the focus; the end takes it to the summary", async () => {
    const { root, sent, kernel } = setup();
    const supported = root.querySelector('[data-label="supported"]');
    supported.focus();
    supported.click();
    expect(sent.at(-1).label).toBe("supported");
    kernel({ item: pair("p2") });
    await settle();
    expect(document.activeElement).toBe(supported);
    expect(root.querySelector(".citelab-labeller-claim").textContent).toBe(
      "Late payment costs 50 euros.",
    );
    supported.click();
    kernel({ item: null, progress: { decided: 10, wanted: 10, skipped: 2 } });
    await settle();
    const done = root.querySelector(".citelab-labeller-done");
    expect(done.hidden).toBe(false);
    expect(document.activeElement).toBe(done);
    expect(done.textContent).toContain("10 decisions saved to labels.jsonl (2 skipped)");
    expect(supported.getAttribute("aria-disabled")).toBe("true");
  });

  test("when the focused element goes with its pair, the labeller takes the focus", async () => {
    const { root, section, kernel } = setup({
      item: pair("p1", { passages: [{ ...pair().passages[0], uri: "https://example.org/fees" }] }),
    });
    const link = root.querySelector(".citelab-labeller-uri a");
    link.focus();
    press(link, "3");
    kernel({ item: pair("p2") });
    await settle();
    expect(document.activeElement).toBe(section);
  });

  test("a refused label says why and the pair stays", async () => {
    const { root, section, kernel } = setup();
    press(section, "1");
    kernel({}, "cannot write labels labels.jsonl: No space left on device");
    await settle();
    const alert = root.querySelector('[role="alert"]');
    expect(alert.hidden).toBe(false);
    expect(alert.textContent).toContain("No space left on device");
    expect(root.querySelector(".citelab-labeller-claim").textContent).toBe(
      "Late payment costs 50 euros.",
    );
  });

  test("a lost kernel disables every control and says the labels are saved", () => {
    const { root, section, state, sent } = setup();
    state.setDisconnected("The kernel restarted or stopped, so this labeller cannot save.");
    press(section, "1");
    expect(sent).toEqual([]);
    for (const button of root.querySelectorAll("button")) {
      expect(button.getAttribute("aria-disabled")).toBe("true");
    }
    expect(root.querySelector('[role="alert"]').textContent).toContain("cannot save");
  });
});

describe("the pair", () => {
  test("the claim, where it comes from, and the passage with its cited sentence marked", () => {
    const { root } = setup();
    expect(root.querySelector(".citelab-labeller-claim").textContent).toBe(
      "Late payment costs 50 euros.",
    );
    const context = [...root.querySelectorAll(".citelab-labeller-context dt, dd")].map(
      (node) => node.textContent,
    );
    expect(context).toEqual(["question", "What does late payment cost?", "case", "fees-1"]);
    const passage = root.querySelector(".citelab-labeller-passage");
    expect(passage.querySelector("h4").textContent).toBe("Cited passage [2]: Fees");
    const text = passage.querySelector(".citelab-labeller-text");
    expect(text.textContent).toBe(PASSAGE);
    const marks = [...text.querySelectorAll("mark.citelab-cited")];
    expect(marks.map((m) => m.textContent)).toEqual(["Late payment costs a fee of 50 euros."]);
    expect(root.querySelector(".citelab-labeller-progress").textContent).toBe(
      "3 of 10 decided · 1 skipped · saved to labels.jsonl",
    );
    const bar = root.querySelector("progress");
    expect([bar.value, bar.max]).toEqual([3, 10]);
  });

  test("span offsets are code points: an emoji before the sentence does not shift the mark", () => {
    const text = "😀 Fees are due. Late payment costs 50 euros.";
    const sentence = "Late payment costs 50 euros.";
    const start = [...text].indexOf("L"); // code points
    const { root } = setup({
      item: pair("p1", {
        passages: [{ text, cited_spans: [{ text: sentence, start, end: start + 28 }] }],
      }),
    });
    expect(root.querySelector("mark").textContent).toBe(sentence);
  });

  test("several passages are numbered; a span that cannot be placed marks nothing", () => {
    const { root } = setup({
      item: pair("p1", {
        passages: [
          { number: 1, title: "A", text: "First passage.", cited_spans: [] },
          { number: 3, title: "B", text: "Second one.", cited_spans: [{ text: "Elsewhere." }] },
        ],
      }),
    });
    const headings = [...root.querySelectorAll(".citelab-labeller-passage h4")];
    expect(headings.map((h) => h.textContent)).toEqual([
      "Cited passage 1 of 2 [1]: A",
      "Cited passage 2 of 2 [3]: B",
    ]);
    expect(root.querySelectorAll("mark")).toHaveLength(0);
  });

  test("untrusted claim, passage, title, context and URI are shown as text", () => {
    const { root } = setup({
      item: {
        id: HOSTILE,
        claim: HOSTILE,
        passages: [
          {
            number: 1,
            title: HOSTILE,
            uri: "javascript:window.hacked=3",
            text: `${HOSTILE} passage`,
            cited_spans: [{ text: HOSTILE, start: 0, end: HOSTILE.length }],
          },
        ],
        context: [[HOSTILE, HOSTILE]],
        verdicts: [{ judge: HOSTILE, verdict: true }],
      },
      notices: [HOSTILE],
      file_name: HOSTILE,
    });
    expect(root.querySelectorAll("img, script, iframe")).toHaveLength(0);
    expect(root.querySelector(".citelab-labeller-claim").textContent).toBe(HOSTILE);
    expect(root.querySelector("mark").textContent).toBe(HOSTILE);
    expect(root.querySelector(".citelab-labeller-uri").textContent).toBe(
      "javascript:window.hacked=3",
    );
    expect(root.querySelector(".citelab-labeller-uri a")).toBe(null); // not a link
    expect(root.querySelector(".citelab-labeller-verdicts").textContent).toContain(HOSTILE);
    expect(root.querySelector(".citelab-labeller-notice").textContent).toBe(HOSTILE);
    expect(window.hacked).toBeUndefined();
  });

  test("a web URI opens in a new tab without the opener", () => {
    const { root } = setup({
      item: pair("p1", { passages: [{ ...pair().passages[0], uri: "https://example.org/a" }] }),
    });
    const link = root.querySelector(".citelab-labeller-uri a");
    expect(link.getAttribute("href")).toBe("https://example.org/a");
    expect(link.getAttribute("target")).toBe("_blank");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  });
});

describe("the judges' verdicts", () => {
  test("shown after the label by default, in the line that confirms it", async () => {
    const { root, section, kernel } = setup({
      progress: { decided: 0, wanted: 5, skipped: 0, judges: ["lexical", "nli"] },
    });
    expect(root.querySelector(".citelab-labeller-verdicts")).toBe(null);
    expect(root.querySelector(".citelab-labeller-note").textContent).toContain(
      "show after you label",
    );
    press(section, "1");
    const verdicts = [
      { judge: "lexical", verdict: true },
      { judge: "nli", verdict: false },
    ];
    kernel({ item: pair("p2"), last: { id: "p1", label: "supported", claim: "c", verdicts } });
    await settle();
    expect(root.querySelector('[role="status"]').textContent).toBe(
      "Saved: supported. The judges said lexical: supported · nli: not supported.",
    );
  });

  test("shown with the pair when the kernel sends them (show_verdicts='before')", () => {
    const verdicts = [{ judge: "lexical", verdict: false }];
    const { root } = setup({ item: pair("p1", { verdicts }), show_verdicts: "before" });
    expect(root.querySelector(".citelab-labeller-verdicts").textContent).toBe(
      "The judges said lexical: not supported.",
    );
    expect(verdictText([])).toBe("");
  });

  test("notices of the kernel are listed; a resumed labeller says so", () => {
    const { root } = setup({ notices: ["labels.jsonl: its last line was cut off"] });
    expect(root.querySelector(".citelab-labeller-notices").hidden).toBe(false);
    expect(root.querySelector('[role="status"]').textContent).toBe(
      "Resumed: 3 decisions and 1 skip were saved before.",
    );
  });
});

describe("the estimate", () => {
  const estimate = { method: "ppi", value: 0.8, low: 0.7, high: 0.9, width: 0.2, labels: 40, too_few: false, more: 12 };

  test("says its interval, width and the labels still needed", () => {
    expect(estimateText(estimate)).toBe(" · supported: 0.80 [0.70, 0.90], width 0.20 · 12 more for ±0.05");
  });

  test("says when a stratum of the design has no label yet", () => {
    const partial = { ...estimate, unlabelled_strata: ["agree"] };
    expect(estimateText(partial)).toContain("of the labelled strata only (none yet: agree)");
    expect(estimateText({ ...estimate, unlabelled_strata: [] })).not.toContain("strata");
  });
});
