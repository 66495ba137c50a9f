// #24: the cited span was the whole passage. The hover card of a marker shows the sentence(s)
// its claim rests on (the message's source quote for that marker's anchor), and the Read view
// marks the reference's cited spans, not the whole retrieved chunk.
import { describe, expect, test } from "vitest";
import { ChatStore } from "../../state/store.js";
import { ChatView } from "../../views/chat_view.js";
import { container, manualSlices, reference, syncSchedule, syncSlices } from "../helpers.js";

const PASSAGE =
  "🎓 Every student pays a semester fee of 312 euros. The fee includes a transport ticket. " +
  "Re\u0301sume\u0301 help is free.";
const DOCUMENT = `Fees at Hollin\n\n${PASSAGE}\n\nApplications close in May.`;
const FEE = "Every student pays a semester fee of 312 euros.";
const TICKET = "The fee includes a transport ticket.";
const RESUME = "Re\u0301sume\u0301 help is free.";
const MAY = "Applications close in May.";

/** `text`'s code point offsets in `within`, as the server writes them. */
function at(within, text) {
  const index = within.indexOf(text);
  if (index < 0) throw new Error(`${text} is not in ${within}`);
  const start = [...within.slice(0, index)].length;
  return { start, end: start + [...text].length };
}

const span = (text) => ({ text, ...at(DOCUMENT, text) });

const FEES = reference(1, {
  uri: "entity:page/fee",
  entity_id: "fee",
  title: "Semester fee",
  passage: PASSAGE,
  cited_spans: [span(FEE), span(TICKET)],
});
const APPLY = reference(2, {
  uri: "entity:page/apply",
  entity_id: "apply",
  title: "Applying",
  passage: `${MAY} Late applications are not read.`,
  cited_spans: [{ text: MAY, start: 0, end: [...MAY].length }],
});

// An answer whose first source is cited twice for two claims, each resting on its own
// sentence; the emoji shifts UTF-16 offsets away from the code point ones.
const TEXT = "💶 You pay 312 euros [1]. It includes a ticket [1][2]. Apply by May [2].";
const CLAIMS = [
  ["💶 You pay 312 euros", FEES, FEE],
  ["It includes a ticket", FEES, TICKET],
  ["It includes a ticket", APPLY, MAY],
  ["Apply by May", APPLY, MAY],
];

function message(quotes = true) {
  const anchors = CLAIMS.map(([claim, source]) => ({
    sourceUri: source.uri,
    citedText: claim,
    startIndex: at(TEXT, claim).start,
    endIndex: at(TEXT, claim).end,
  }));
  const sourceQuotes = CLAIMS.map(([, source, sentence], anchorIndex) => ({
    anchorIndex,
    sourceUri: source.uri,
    text: sentence,
  }));
  const meta = { "drupal.org/ai.citations": anchors };
  if (quotes) meta["citelab/source_quotes"] = sourceQuotes;
  return { content: [{ type: "text", text: TEXT, _meta: meta }] };
}

function chat({ slices = syncSlices, content = DOCUMENT } = {}) {
  const store = new ChatStore();
  const asked = [];
  const host = {
    settings: () => ({ feedbackEnabled: false, placeholder: "Ask", showSources: true }),
    ask: async () => ({}),
    feedback: async () => ({}),
    document: async (ref) => {
      asked.push(ref);
      return { document: { title: ref.title, content } };
    },
  };
  const root = container();
  new ChatView(root, store, host, { schedule: syncSchedule, slices });
  return { store, root, asked };
}

function answer(store, id, { text = TEXT, refs = [FEES, APPLY], msg = message(), followup = false }) {
  store.receive({ type: "turn_start", turn_id: id, question: "Fee?", followup });
  store.receive({
    type: "done",
    turn_id: id,
    text,
    references: refs,
    suggested_replies: [],
    message: msg,
    conversation_id: "c1",
    turn: 1,
  });
}

/** What the hover card says supports each marker of the first answer, in text order. */
function supports(root) {
  return [...root.querySelectorAll(".citelab-answer a[data-ref-index]")].map((link) => {
    link.focus();
    const quote = root.querySelector(".citelab-hovercard .citelab-hovercard-passage");
    link.blur();
    return [link.dataset.refIndex, quote.textContent, quote.classList.contains("citelab-hovercard-cited")];
  });
}

describe("the hover card shows the sentence a claim rests on", () => {
  test("each marker shows its own anchor's source quote, not the passage", () => {
    const { store, root } = chat();
    answer(store, "t1", {});
    const links = [...root.querySelectorAll(".citelab-answer a[data-ref-index]")];
    expect(links.map((link) => link.dataset.anchor)).toEqual(["0", "1", "2", "3"]);
    expect(supports(root)).toEqual([
      ["1", FEE, true],
      ["1", TICKET, true],
      ["2", MAY, true],
      ["2", MAY, true],
    ]);
  });

  test("before the spans are marked the card shows the passage, then the sentence", () => {
    const slices = manualSlices();
    const { store, root } = chat({ slices });
    answer(store, "t1", {});
    const link = root.querySelector('.citelab-answer a[data-ref-index="1"]');
    link.focus();
    const card = root.querySelector(".citelab-hovercard");
    expect(card.querySelector(".citelab-hovercard-passage").textContent).toBe(PASSAGE);
    slices.finish();
    expect(card.hidden).toBe(false);
    expect(card.querySelector(".citelab-hovercard-passage").textContent).toBe(FEE);
  });

  test("without source quotes: the one cited span of a source, else the passage", () => {
    const { store, root } = chat();
    answer(store, "t1", { msg: message(false) });
    expect(supports(root)).toEqual([
      ["1", PASSAGE, false], // two spans: which one is not known
      ["1", PASSAGE, false],
      ["2", MAY, true], // one span: every claim citing it rests on it
      ["2", MAY, true],
    ]);
  });

  test("a marker whose claim has no anchor gets none (never another claim's)", () => {
    const { store, root } = chat();
    const text = "You pay 312 euros [1]. See also:\n\n[1]";
    const anchor = { sourceUri: FEES.uri, citedText: "You pay 312 euros", startIndex: 0, endIndex: 17 };
    const msg = {
      content: [
        {
          type: "text",
          text,
          _meta: {
            "drupal.org/ai.citations": [anchor],
            "citelab/source_quotes": [{ anchorIndex: 0, sourceUri: FEES.uri, text: FEE }],
          },
        },
      ],
    };
    answer(store, "t1", { text, refs: [FEES], msg });
    const links = [...root.querySelectorAll(".citelab-answer a[data-ref-index]")];
    expect(links.map((link) => link.dataset.anchor)).toEqual(["0", undefined]);
    expect(supports(root).map(([, quote]) => quote)).toEqual([FEE, PASSAGE]);
  });

  test("a quote of another source or a malformed one is not shown", () => {
    const { store, root } = chat();
    const msg = message();
    msg.content[0]._meta["citelab/source_quotes"] = [
      { anchorIndex: 0, sourceUri: APPLY.uri, text: "Wrong source." },
      { anchorIndex: "1", sourceUri: FEES.uri, text: "Bad index." },
      { anchorIndex: 3, sourceUri: APPLY.uri, text: 42 },
    ];
    answer(store, "t1", { msg });
    const shown = supports(root).map(([, quote]) => quote);
    expect(shown).toEqual([PASSAGE, PASSAGE, MAY, MAY]);
  });
});

describe("the Read view marks the cited sentences", () => {
  async function read(root, index = 0) {
    root.querySelectorAll("button.citelab-source-read")[index].click();
    await new Promise((resolve) => setTimeout(resolve));
    return root.querySelector(".citelab-document");
  }

  test("each cited span at its code point offsets (emoji, combining marks), not the passage", async () => {
    const scrolled = [];
    // jsdom has no scrolling: record which element is asked to show itself.
    HTMLElement.prototype.scrollIntoView = function scrollIntoView() {
      scrolled.push(this);
    };
    try {
      const { store, root } = chat();
      answer(store, "t1", {});
      const view = await read(root);
      const marks = [...view.querySelectorAll(".citelab-document-text mark")];
      expect(marks.map((mark) => mark.textContent)).toEqual([FEE, TICKET]);
      expect(marks[0].className).toBe("citelab-cited citelab-document-span");
      expect(view.querySelector(".citelab-document-passage")).toBeNull();
      expect(view.querySelector(".citelab-document-text").textContent).toBe(DOCUMENT);
      expect(scrolled.at(-1)).toBe(marks[0]); // the first mark is brought into view
    } finally {
      delete HTMLElement.prototype.scrollIntoView;
    }
  });

  test("the sentence after a combining mark alone", async () => {
    const { store, root } = chat();
    const resume = { ...FEES, cited_spans: [span(RESUME)] };
    answer(store, "t1", { refs: [resume, APPLY] });
    const view = await read(root);
    expect([...view.querySelectorAll("mark")].map((mark) => mark.textContent)).toEqual([RESUME]);
  });

  test("a later turn citing the same source adds its sentences to the one card's view", async () => {
    const { store, root, asked } = chat();
    const first = { ...FEES, cited_spans: [span(FEE)] };
    answer(store, "t1", { refs: [first, APPLY] });
    const later = { ...FEES, cited_spans: [span(RESUME)] };
    answer(store, "t2", { refs: [later], followup: true, text: "Help is free [1].", msg: {} });
    expect(root.querySelectorAll("button.citelab-source-read")).toHaveLength(2); // one card each
    const view = await read(root);
    expect([...view.querySelectorAll("mark")].map((mark) => mark.textContent)).toEqual([FEE, RESUME]);
    expect(asked[0].uri).toBe(FEES.uri);
  });

  test("offsets into another version fall back to the text; a missing text marks nothing", async () => {
    const moved = `Preface.\n\n${DOCUMENT}`;
    const { store, root } = chat({ content: moved });
    answer(store, "t1", {});
    const view = await read(root);
    expect([...view.querySelectorAll("mark")].map((mark) => mark.textContent)).toEqual([FEE, TICKET]);
    const other = chat({ content: "Ganz anderer Text. Die Gebühr beträgt 312 Euro." });
    answer(other.store, "t1", {});
    const elsewhere = await read(other.root);
    expect(elsewhere.querySelectorAll("mark")).toHaveLength(0);
  });

  test("a reference without cited spans (an older answer) marks its passage", async () => {
    const { store, root } = chat();
    const old = { ...FEES, cited_spans: undefined };
    answer(store, "t1", { refs: [old], msg: {} });
    const view = await read(root);
    expect(view.querySelector("mark.citelab-document-passage").textContent).toBe(PASSAGE);
  });
});
