// A done turn's cited spans are marked in slices (one per frame), not in one long update:
// the final DOM is the one marking in one go gives, a cleared chat gets no marks, a second
// turn does not disturb the first's marking, and the hover card highlights marks already
// made and the ones still to come.
import { describe, expect, test } from "vitest";
import { ChatView } from "../../views/chat_view.js";
import { AnchorMarking, highlightAnchors, unmarkCitedSpans } from "../../render/anchors.js";
import { renderBlocks } from "../../render/markdown.js";
import { sanitizeToFragment } from "../../render/sanitize.js";
import { ChatStore } from "../../state/store.js";
import {
  container,
  manualSlices,
  reference,
  syncSchedule,
  syncSlices,
  turnMessages,
} from "../helpers.js";

const REFS = [1, 2, 3, 4].map((n) => reference(n));

// An answer shaped like model output: paragraphs, bold, code, a list and a table, every
// sentence citing one source (its anchor is the sentence with its marker).
function answer(sentences) {
  const words = ["Rooms", "open", "**late**", "in", "`term`", "weeks", "for", "groups"];
  const sentence = (i) => `${words.slice(0, 3 + (i % 6)).join(" ")} number ${i} [${1 + (i % 4)}].`;
  const parts = [];
  for (let i = 0; i < sentences; i += 4) {
    const group = [i, i + 1, i + 2, i + 3].filter((n) => n < sentences).map(sentence);
    if (i % 12 === 4) parts.push(group.map((s) => `- ${s}`).join("\n"));
    else parts.push(group.join(" "));
  }
  parts.push("| Room | Open |\n|:--|--:|\n| R1 | 18:00 [2] |");
  return parts.join("\n\n");
}

function anchorsOf(text) {
  return [...text.matchAll(/Rooms[^.[\]\n]*? \[(\d)\]/g)].map((match) => ({
    sourceUri: `entity:node/${match[1]}`,
    citedText: match[0],
    startIndex: match.index,
    endIndex: match.index + match[0].length,
  }));
}

function messageOf(text) {
  return { content: [{ type: "text", text, _meta: { "drupal.org/ai.citations": anchorsOf(text) } }] };
}

function chat(slices) {
  const store = new ChatStore();
  const host = {
    settings: () => ({ feedbackEnabled: true, placeholder: "Ask", showSources: true }),
    ask: async () => ({}),
    feedback: async () => ({}),
    newConversation: async () => {
      store.reset();
      return {};
    },
  };
  const root = container();
  const view = new ChatView(root, store, host, { schedule: syncSchedule, slices });
  return { store, root, view };
}

function answerTurn(store, id, text, { followup = false } = {}) {
  const messages = turnMessages(id, {
    text,
    references: REFS,
    followup,
    done: { message: messageOf(text) },
  });
  for (const message of messages) store.receive(message);
}

function answerOf(root, id) {
  return root.querySelector(`[data-turn-id="${id}"] .citelab-answer`);
}

// An answer's HTML without the document-unique ids of its cards (two chats differ there).
function htmlOf(root, id) {
  return answerOf(root, id).innerHTML.replace(/citelab-[a-z]+-[a-z0-9]{6}-\d+/g, "ID");
}

// Slices until some of the spans are marked (but not all): the marking is half way.
function runUntilMarked(slices, root, id) {
  for (let i = 0; i < 10_000 && !answerOf(root, id).querySelector("mark"); i++) slices.run(1);
  slices.run(20);
  expect(answerOf(root, id).querySelectorAll("mark").length).toBeGreaterThan(0);
  expect(slices.pending).toBeGreaterThan(0);
}

const TEXT = answer(40);

describe("cited spans marked in slices", () => {
  test("the final DOM after many slices equals marking in one go", () => {
    const once = chat(syncSlices);
    answerTurn(once.store, "t1", TEXT);
    const slices = manualSlices();
    const sliced = chat(slices);
    answerTurn(sliced.store, "t1", TEXT);
    expect(answerOf(sliced.root, "t1").querySelectorAll("mark")).toHaveLength(0);
    const rounds = slices.finish();
    expect(rounds).toBeGreaterThan(40); // one step per slice: many slices
    const expected = answerOf(once.root, "t1");
    expect(expected.querySelectorAll("mark.citelab-cited").length).toBeGreaterThan(40);
    expect(htmlOf(sliced.root, "t1")).toBe(htmlOf(once.root, "t1"));
  });

  test("AnchorMarking one step at a time leaves the DOM highlightAnchors leaves, footnotes too", () => {
    const anchors = anchorsOf(TEXT).map((anchor, order) => ({
      start: anchor.startIndex,
      end: anchor.endIndex,
      number: Number(anchor.sourceUri.at(-1)),
      order,
    }));
    const ids = new Map(REFS.map((ref) => [ref.number, `src-${ref.number}`]));
    const render = () => {
      const root = document.createElement("div");
      root.append(sanitizeToFragment(renderBlocks(TEXT, { turn: "m" }).join("")));
      return root;
    };
    const whole = render();
    const placed = highlightAnchors(whole, TEXT, anchors, ids);
    const stepped = render();
    const marking = new AnchorMarking(stepped, TEXT, anchors, ids);
    const added = [];
    let steps = 0;
    while (!marking.done) {
      added.push(...marking.step(() => false));
      steps += 1;
    }
    expect(steps).toBeGreaterThan(anchors.length);
    expect(marking.placed).toBe(placed);
    expect(placed).toBe(anchors.length);
    expect(stepped.innerHTML).toBe(whole.innerHTML);
    expect(added).toEqual([...stepped.querySelectorAll("mark.citelab-cited")]);
    expect(whole.querySelectorAll("sup.citelab-footnote")).toHaveLength(anchors.length);
  });

  test("New conversation while slicing: the slices stop and the cleared chat has no marks", async () => {
    const slices = manualSlices();
    const { store, root, view } = chat(slices);
    answerTurn(store, "t1", TEXT);
    runUntilMarked(slices, root, "t1");
    const old = answerOf(root, "t1");
    const partly = old.querySelectorAll("mark").length;
    await view.startOver();
    expect(slices.pending).toBe(0);
    slices.finish();
    expect(old.querySelectorAll("mark").length).toBe(partly); // the old answer is left alone
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(0);
    expect(root.querySelectorAll("mark")).toHaveLength(0);
    // The next conversation's turn is marked once, fully.
    answerTurn(store, "t9", TEXT);
    slices.finish();
    const once = chat(syncSlices);
    answerTurn(once.store, "t9", TEXT);
    expect(htmlOf(root, "t9")).toBe(htmlOf(once.root, "t9"));
  });

  test("a second turn arriving mid-slicing: both end marked once, as in one go", () => {
    const second = answer(9);
    const slices = manualSlices();
    const { store, root } = chat(slices);
    answerTurn(store, "t1", TEXT);
    runUntilMarked(slices, root, "t1");
    answerTurn(store, "t2", second, { followup: true });
    expect(slices.pending).toBe(2);
    slices.finish();
    const once = chat(syncSlices);
    answerTurn(once.store, "t1", TEXT);
    answerTurn(once.store, "t2", second, { followup: true });
    for (const id of ["t1", "t2"]) {
      expect(htmlOf(root, id)).toBe(htmlOf(once.root, id));
    }
    expect(root.querySelectorAll("mark mark")).toHaveLength(0);
  });

  test("new anchors for the same text replace the marks (none doubled)", () => {
    const { store, root } = chat(syncSlices);
    answerTurn(store, "t1", TEXT);
    const first = answerOf(root, "t1").innerHTML;
    // The same done again with new (equal) references and message: marked afresh.
    store.receive({
      type: "done",
      turn_id: "t1",
      text: TEXT,
      references: REFS.map((ref) => ({ ...ref })),
      suggested_replies: [],
      message: messageOf(TEXT),
      conversation_id: "c1",
      turn: 1,
      no_answer: false,
    });
    expect(root.querySelectorAll("mark mark")).toHaveLength(0);
    expect(answerOf(root, "t1").innerHTML).toBe(first);
  });

  test("unmarkCitedSpans gives back the unmarked text nodes", () => {
    const root = document.createElement("div");
    root.append(sanitizeToFragment(renderBlocks(TEXT, { turn: "m" }).join("")));
    const before = root.innerHTML;
    const anchors = anchorsOf(TEXT).map((a, order) => ({
      start: a.startIndex,
      end: a.endIndex,
      number: 1,
      order,
    }));
    highlightAnchors(root, TEXT, anchors, null);
    expect(root.innerHTML).not.toBe(before);
    unmarkCitedSpans(root);
    expect(root.innerHTML).toBe(before);
  });

  test("the hover card highlights marks made so far, and the rest as they come", () => {
    const slices = manualSlices();
    const { store, root } = chat(slices);
    answerTurn(store, "t1", TEXT);
    runUntilMarked(slices, root, "t1");
    const answerElement = answerOf(root, "t1");
    const citing = () => [...answerElement.querySelectorAll('mark[data-sources~="2"]')];
    const soFar = citing();
    expect(soFar.length).toBeGreaterThan(0);
    const link = answerElement.querySelector('a[data-ref-index="2"]');
    link.focus();
    expect(root.querySelector(".citelab-hovercard").hidden).toBe(false);
    expect(soFar.every((mark) => mark.classList.contains("citelab-cited-active"))).toBe(true);
    slices.finish();
    const all = citing();
    expect(all.length).toBeGreaterThan(soFar.length);
    expect(all.every((mark) => mark.classList.contains("citelab-cited-active"))).toBe(true);
    const active = [...answerElement.querySelectorAll("mark.citelab-cited-active")];
    expect(active).toEqual(all); // no other source's marks
    link.blur();
    expect(answerElement.querySelectorAll("mark.citelab-cited-active")).toHaveLength(0);
  });
});
