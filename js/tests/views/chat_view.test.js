import { describe, expect, test, vi } from "vitest";
import { ChatView } from "../../views/chat_view.js";
import { frameScheduler } from "../../dom/frames.js";
import { SourcesView } from "../../views/sources_view.js";
import { ChatStore } from "../../state/store.js";
import { BlockStream } from "../../render/stream.js";
import { container, reference, syncSchedule, turnMessages } from "../helpers.js";

function chat({ feedbackEnabled = true, showSources = true, sections = [] } = {}) {
  const store = new ChatStore();
  const calls = { ask: [], feedback: [] };
  const host = {
    answers: { ask: {}, feedback: {} },
    settings: () => ({ feedbackEnabled, placeholder: "Ask me", showSources }),
    ask: async (question, followup) => {
      calls.ask.push({ question, followup });
      return host.answers.ask;
    },
    feedback: async (turn, value, comment) => {
      calls.feedback.push({ turn_id: turn.turn_id, value, comment });
      return host.answers.feedback;
    },
  };
  const root = container();
  const view = new ChatView(root, store, host, { schedule: syncSchedule, sections });
  return { store, root, view, calls, host };
}

function feed(store, messages) {
  for (const message of messages) store.receive(message);
}

const ANSWER = "Paris is the capital [1]. It is large [2].\n\n- Seine [1]\n- Louvre [3]";
const REFS = [reference(1), reference(2), reference(3)];

describe("chat view", () => {
  test("while a turn streams, a draw reads only the new pieces, not the whole text", () => {
    const { store, root } = chat();
    const update = vi.spyOn(BlockStream.prototype, "update");
    const extend = vi.spyOn(BlockStream.prototype, "extend");
    try {
      const final = ANSWER.replace("Louvre [3]", "Louvre [2]"); // renumbered by finalize
      const messages = turnMessages("t1", {
        text: ANSWER,
        references: REFS,
        pieces: 9,
        done: { text: final },
      });
      feed(store, messages.slice(0, -1));
      // Whole texts only before the pieces began: the empty turn, then its first piece.
      expect(update.mock.calls).toEqual([[""], [messages[2].text]]);
      expect(extend.mock.calls.map(([piece]) => piece).join("")).toBe(
        messages
          .slice(3, -1)
          .map((m) => m.text)
          .join(""),
      );
      feed(store, messages.slice(-1)); // done: the final text is read whole
      expect(update.mock.calls).toHaveLength(3);
      expect(root.querySelector(".citelab-answer").textContent).toContain("Louvre [2]");
    } finally {
      update.mockRestore();
      extend.mockRestore();
    }
  });

  test("streams the answer, shows sources and links markers to cards", () => {
    const { store, root } = chat();
    feed(store, turnMessages("t1", { text: ANSWER, references: REFS, pieces: 9 }));
    const turn = root.querySelector(".citelab-turn");
    expect(turn.querySelector(".citelab-question").textContent).toBe("Q?");
    expect(turn.querySelector(".citelab-answer").textContent).toContain("Paris is the capital [1]");
    const cards = root.querySelectorAll(".citelab-chat-sources li.citelab-source");
    expect(cards).toHaveLength(3);
    const marker = turn.querySelector('a[data-ref-index="2"]');
    expect(marker.getAttribute("href")).toBe(`#${cards[1].id}`);
    expect(turn.getAttribute("aria-busy")).toBe("false");
  });

  test("pending placeholders while waiting, then the error state", () => {
    const { store, root } = chat();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Q", followup: false });
    const turn = root.querySelector(".citelab-turn");
    expect(turn.querySelector(".citelab-answer-pending").hidden).toBe(false);
    expect(root.querySelector(".citelab-source-pending")).not.toBeNull();
    expect(turn.getAttribute("aria-busy")).toBe("true");
    store.receive({
      type: "error",
      turn_id: "t1",
      code: "conflict",
      message: "The agent is disabled.",
    });
    const error = turn.querySelector(".citelab-error");
    expect(error.hidden).toBe(false);
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain("The agent is disabled.");
    expect(turn.querySelector(".citelab-answer-pending").hidden).toBe(true);
    expect(root.querySelector(".citelab-source-pending")).toBeNull();
    expect(root.querySelector(".citelab-followup").hidden).toBe(false);
  });

  test("the question form asks a new question; the follow-up form a follow-up", async () => {
    const { store, root, calls } = chat();
    const ask = root.querySelector(".citelab-ask");
    ask.querySelector("input").value = "  What is citelab?  ";
    ask.requestSubmit();
    feed(store, turnMessages("t1", { text: "An answer.", references: [] }));
    const followup = root.querySelector(".citelab-followup");
    expect(followup.hidden).toBe(false);
    followup.querySelector("input").value = "And then?";
    followup.requestSubmit();
    await Promise.resolve();
    expect(calls.ask).toEqual([
      { question: "What is citelab?", followup: false },
      { question: "And then?", followup: true },
    ]);
  });

  test("an empty question is not sent and says why; a refused one keeps the text", async () => {
    const { root, calls, host } = chat();
    const form = root.querySelector(".citelab-ask");
    form.requestSubmit();
    const error = form.querySelector(".citelab-form-error");
    expect(error.hidden).toBe(false);
    expect(calls.ask).toEqual([]);
    host.answers.ask = { error: "The question is too long." };
    form.querySelector("input").value = "x";
    form.requestSubmit();
    await new Promise((resolve) => setTimeout(resolve));
    expect(error.textContent).toBe("The question is too long.");
    expect(form.querySelector("input").value).toBe("x");
  });

  test("a chip asks its message, falling back to its label", () => {
    const { store, root, calls } = chat();
    const replies = [
      { label: "Tell me more", message: "Tell me more about the Louvre" },
      { label: "Thanks" },
    ];
    feed(
      store,
      turnMessages("t1", { text: "Answer.", references: [], done: { suggested_replies: replies } }),
    );
    const chips = root.querySelectorAll(".citelab-chip");
    expect([...chips].map((chip) => chip.textContent)).toEqual(["Tell me more", "Thanks"]);
    chips[0].click();
    chips[1].click();
    expect(calls.ask).toEqual([
      { question: "Tell me more about the Louvre", followup: true },
      { question: "Thanks", followup: true },
    ]);
    expect(root.querySelector(".citelab-chips").getAttribute("aria-label")).toBe(
      "Suggested replies",
    );
  });

  test("chips show only under the latest answer", () => {
    const { store, root } = chat();
    const done = { suggested_replies: [{ label: "More" }] };
    feed(store, turnMessages("t1", { text: "One.", references: [], done }));
    feed(store, turnMessages("t2", { text: "Two.", references: [], followup: true, done }));
    const [first, second] = root.querySelectorAll(".citelab-turn");
    expect(first.querySelector(".citelab-chips").hidden).toBe(true);
    expect(second.querySelector(".citelab-chips").hidden).toBe(false);
  });

  test("feedback buttons send a value, then an optional comment", async () => {
    const { store, root, calls } = chat();
    feed(store, turnMessages("t1", { text: "Answer.", references: [] }));
    const feedback = root.querySelector(".citelab-feedback");
    expect(feedback.hidden).toBe(false);
    const [up, down] = feedback.querySelectorAll(".citelab-thumb");
    // The accessible name is the visible text; the icon is an SVG (no emoji font needed).
    expect(up.textContent).toBe("Helpful");
    expect(down.textContent).toBe("Not helpful");
    expect(up.querySelector("svg[aria-hidden=true]")).not.toBeNull();
    down.click();
    await new Promise((resolve) => setTimeout(resolve));
    expect(down.getAttribute("aria-pressed")).toBe("true");
    expect(up.getAttribute("aria-pressed")).toBe("false");
    expect(feedback.querySelector("[role=status]").textContent).toBe("Thanks for your feedback.");
    const comment = feedback.querySelector(".citelab-feedback-comment");
    comment.querySelector("input").value = "Missing the dates";
    comment.requestSubmit();
    await new Promise((resolve) => setTimeout(resolve));
    expect(calls.feedback).toEqual([
      { turn_id: "t1", value: "down", comment: undefined },
      { turn_id: "t1", value: "down", comment: "Missing the dates" },
    ]);
  });

  // #24: "Send comment" gave no confirmation and kept the text.
  test("a sent comment is confirmed and cleared; a failed one keeps its text", async () => {
    const { store, root, host, calls } = chat();
    feed(store, turnMessages("t1", { text: "Answer.", references: [] }));
    root.querySelector(".citelab-thumb").click();
    await new Promise((resolve) => setTimeout(resolve));
    const form = root.querySelector(".citelab-feedback-comment");
    const input = form.querySelector("input");
    const status = root.querySelector(".citelab-feedback-status");
    form.requestSubmit(); // nothing typed: nothing sent, and it says why
    await new Promise((resolve) => setTimeout(resolve));
    expect(calls.feedback).toHaveLength(1);
    expect(form.querySelector(".citelab-form-error").textContent).toBe("Please type a comment first.");
    host.answers.feedback = { error: "The kernel did not answer." };
    input.value = "Missing the dates";
    form.requestSubmit();
    await new Promise((resolve) => setTimeout(resolve));
    expect(input.value).toBe("Missing the dates");
    expect(status.textContent).toBe("Comment not saved: The kernel did not answer.");
    host.answers.feedback = {};
    form.requestSubmit();
    await new Promise((resolve) => setTimeout(resolve));
    expect(calls.feedback.at(-1)).toMatchObject({ value: "up", comment: "Missing the dates" });
    expect(input.value).toBe("");
    expect(status.textContent).toBe("Comment sent. Thanks for your feedback.");
    expect(form.querySelector(".citelab-form-error").hidden).toBe(true);
  });

  test("feedback failure is visible; no feedback when disabled or on a no-answer", async () => {
    const { store, root, host } = chat();
    host.answers.feedback = { error: "Feedback is off for this agent." };
    feed(store, turnMessages("t1", { text: "Answer.", references: [] }));
    root.querySelector(".citelab-thumb").click();
    await new Promise((resolve) => setTimeout(resolve));
    expect(root.querySelector(".citelab-feedback-status").textContent).toContain("Feedback is off");
    feed(
      store,
      turnMessages("t2", {
        text: "No answer.",
        references: [],
        followup: true,
        done: { no_answer: true },
      }),
    );
    expect(root.querySelectorAll(".citelab-feedback")[1].hidden).toBe(true);
    const disabled = chat({ feedbackEnabled: false });
    feed(disabled.store, turnMessages("t1", { text: "Answer.", references: [] }));
    expect(disabled.root.querySelector(".citelab-feedback").hidden).toBe(true);
  });

  test("references are shared across turns; the provisional list gives way to the final one", () => {
    const { store, root } = chat();
    feed(
      store,
      turnMessages("t1", { text: "One [1] [2].", references: [reference(1), reference(2)] }),
    );
    const firstCards = [...root.querySelectorAll('li[data-ref-turn="t1"]')];
    store.receive({ type: "turn_start", turn_id: "t2", question: "More?", followup: true });
    store.receive({
      type: "references",
      turn_id: "t2",
      references: [
        reference(1, { entity_id: "2" }),
        reference(2, { entity_id: "7" }),
        reference(3, { entity_id: "8" }),
      ],
    });
    store.receive({ type: "token", turn_id: "t2", text: "Again [1] and [3]." });
    expect(root.querySelectorAll('li[data-ref-turn="t2"]')).toHaveLength(2);
    const turn2 = root.querySelectorAll(".citelab-turn")[1];
    expect(turn2.querySelector('a[data-ref-index="1"]').getAttribute("href")).toBe(
      `#${firstCards[1].id}`,
    );
    store.receive({
      type: "done",
      turn_id: "t2",
      text: "Again [1] and [2].",
      references: [reference(1, { entity_id: "2" }), reference(2, { entity_id: "8" })],
      conversation_id: "c1",
    });
    expect([...root.querySelectorAll('li[data-ref-turn="t1"]')]).toEqual(firstCards);
    expect(root.querySelectorAll('li[data-ref-turn="t2"]')).toHaveLength(1);
    const links = turn2.querySelectorAll("a[data-ref-index]");
    expect(links[0].getAttribute("href")).toBe(`#${firstCards[1].id}`);
    expect(links[1].getAttribute("href")).toBe(
      `#${root.querySelector('li[data-ref-turn="t2"]').id}`,
    );
    // The earlier turn's markers were not touched.
    expect(
      root
        .querySelector(".citelab-turn")
        .querySelector('a[data-ref-index="2"]')
        .getAttribute("href"),
    ).toBe(`#${firstCards[1].id}`);
  });

  test("a turn's end relinks the markers only when what they link to changed", () => {
    const { store, root } = chat();
    const messages = turnMessages("t1", { text: ANSWER, references: REFS, pieces: 9 });
    feed(store, messages.slice(0, -1));
    const answer = root.querySelector(".citelab-answer");
    const cards = [...root.querySelectorAll(".citelab-chat-sources li.citelab-source")];
    const walks = vi.spyOn(answer, "querySelectorAll");
    // done with the same sources (a new, equal list): the cards stay, the markers are not
    // walked again (the turn's end used to relink every one of them).
    feed(store, [{ ...messages.at(-1), references: structuredClone(REFS) }]);
    expect(walks.mock.calls.filter(([selector]) => selector === "a[data-ref-index]")).toEqual([]);
    const after = [...root.querySelectorAll(".citelab-chat-sources li.citelab-source")];
    expect(after.map((card, index) => card === cards[index])).toEqual([true, true, true]);
    const marker = answer.querySelector('a[data-ref-index="3"]');
    expect(marker.getAttribute("href")).toBe(`#${cards[2].id}`);
    expect(marker.getAttribute("aria-label")).toBe("Source 3: Source 3");
  });

  test("a turn's end relinks the markers when a source's card changed", () => {
    const { store, root } = chat();
    const messages = turnMessages("t1", { text: ANSWER, references: REFS, pieces: 9 });
    feed(store, messages.slice(0, -1));
    const walks = vi.spyOn(root.querySelector(".citelab-answer"), "querySelectorAll");
    const renamed = [REFS[0], REFS[1], reference(3, { title: "Louvre guide" })];
    feed(store, [{ ...messages.at(-1), references: renamed }]);
    expect(walks.mock.calls.filter(([selector]) => selector === "a[data-ref-index]")).toHaveLength(1);
    const card = root.querySelectorAll(".citelab-chat-sources li.citelab-source")[2];
    const marker = root.querySelector('.citelab-answer a[data-ref-index="3"]');
    expect(marker.getAttribute("href")).toBe(`#${card.id}`);
    expect(marker.getAttribute("aria-label")).toBe("Source 3: Louvre guide");
  });

  test("a new question clears turns and sources", () => {
    const { store, root } = chat();
    feed(store, turnMessages("t1", { text: "One [1].", references: [reference(1)] }));
    feed(
      store,
      turnMessages("t2", {
        text: "Two [1].",
        references: [reference(1, { entity_id: "9" })],
        followup: false,
      }),
    );
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(1);
    expect([...root.querySelectorAll("li.citelab-source")].map((li) => li.dataset.refTurn)).toEqual(
      ["t2"],
    );
  });

  test("following a marker focuses its card and tells panels", () => {
    const { store, root } = chat();
    feed(store, turnMessages("t1", { text: "One [1].", references: [reference(1)] }));
    const seen = [];
    document.addEventListener("citelab:cite", (event) => seen.push(event.detail), { once: true });
    root.querySelector("a[data-ref-index]").click();
    expect(document.activeElement).toBe(root.querySelector("li.citelab-source"));
    expect(seen).toEqual([{ turnId: "t1", number: 1, conversationId: "c1" }]);
  });

  test("the settled part of an answer keeps its DOM while the tail streams", () => {
    const { store, root } = chat();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Q", followup: false });
    store.receive({ type: "token", turn_id: "t1", text: "First paragraph [1].\n\nSecond" });
    store.receive({ type: "token", turn_id: "t1", text: " starts\n" });
    const first = root.querySelector(".citelab-answer p");
    for (const piece of [" and", " grows", "\n\nThird."])
      store.receive({ type: "token", turn_id: "t1", text: piece });
    expect(root.querySelector(".citelab-answer p")).toBe(first);
    expect(root.querySelectorAll(".citelab-answer p")).toHaveLength(3);
  });

  test("zero, one or several Sources panels show the same list", () => {
    const panelA = container();
    const panelB = container();
    const { store, root } = chat({ showSources: false, sections: [panelA, panelB] });
    feed(
      store,
      turnMessages("t1", { text: "One [1] [2].", references: [reference(1), reference(2)] }),
    );
    expect(root.querySelector(".citelab-chat-sources")).toBeNull();
    for (const panel of [panelA, panelB])
      expect(panel.querySelectorAll("li.citelab-source")).toHaveLength(2);
    const marker = root.querySelector('a[data-ref-index="2"]');
    expect(marker.getAttribute("href")).toBe(`#${panelA.querySelectorAll("li")[1].id}`);

    const none = chat({ showSources: false });
    feed(none.store, turnMessages("t1", { text: "One [1] [5].", references: [reference(1)] }));
    const [one, five] = none.root.querySelectorAll("a[data-ref-index]");
    expect(one.getAttribute("href")).toBe("#cite-t1-1"); // still a link: panels elsewhere react
    expect(five.hasAttribute("href")).toBe(false);
  });

  test("a separate Sources view (the panel widget) follows the store and the cite event", () => {
    const { store, root } = chat({ showSources: false });
    const panelRoot = container();
    const panel = new SourcesView(panelRoot, store, { schedule: syncSchedule });
    feed(store, turnMessages("t1", { text: "One [1].", references: [reference(1)] }));
    expect(panelRoot.querySelectorAll("li.citelab-source")).toHaveLength(1);
    root.querySelector("a[data-ref-index]").click();
    expect(panelRoot.querySelector("li").classList.contains("citelab-source-target")).toBe(true);
    panel.destroy();
  });

  test("keyboard access: labelled inputs, real buttons, a log region", () => {
    const { store, root } = chat();
    feed(
      store,
      turnMessages("t1", {
        text: "Answer.",
        references: [],
        done: { suggested_replies: [{ label: "More" }] },
      }),
    );
    for (const input of root.querySelectorAll("input")) {
      const label = root.querySelector(`label[for="${input.id}"]`);
      expect(label?.textContent).toBeTruthy();
    }
    for (const button of root.querySelectorAll("button"))
      expect(button.type).toMatch(/button|submit/);
    expect(root.querySelector(".citelab-turns").getAttribute("role")).toBe("log");
    expect(root.querySelector("input").placeholder).toBe("Ask me");
  });

  test("draws are coalesced to one per animation frame", async () => {
    const store = new ChatStore();
    let draws = 0;
    const root = container();
    const host = {
      settings: () => ({ showSources: true }),
      ask: async () => ({}),
      feedback: async () => ({}),
    };
    const view = new ChatView(root, store, host, {
      schedule: (draw) =>
        frameScheduler(() => {
          draws++;
          draw();
        }),
    });
    feed(store, turnMessages("t1", { text: "x".repeat(100), references: [], pieces: 50 }));
    expect(draws).toBe(0);
    await new Promise((resolve) => requestAnimationFrame(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(draws).toBe(1);
    expect(root.querySelector(".citelab-answer").textContent.trim()).toBe("x".repeat(100));
    view.destroy();
  });
});
