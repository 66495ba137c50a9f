import { describe, expect, test } from "vitest";
import chatWidget from "../../entries/widget_chat.js";
import messageWidget from "../../entries/widget_message.js";
import sourcesWidget from "../../entries/widget_sources.js";
import { storeOf } from "../../kernel/widget_store.js";
import { container, FakeModel, reference, turnMessages } from "../helpers.js";

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));

function chatModel(traits = {}) {
  return new FakeModel({
    turns: [],
    conversation_id: null,
    agent: "default",
    feedback_enabled: false,
    placeholder: "Ask",
    show_sources: true,
    ...traits,
  });
}

const ROUNDS = {
  system_prompt: "You are the test agent.",
  forced: [{ name: "rag_search", arguments: '{"query": "fees"}', error: null, message: "[1] Fees" }],
  rounds: [{ index: 1, finish_reason: "stop", text: "Fees [1].", tool_calls: [] }],
};

describe("chat widget", () => {
  // #24: the view drew the live `done` (no rounds) over the trait (rounds): the expander
  // stayed hidden and empty in every notebook.
  test("a done turn shows its Prompt and rounds, from the done message or the trait", async () => {
    for (const withRounds of [true, false]) {
      const model = chatModel();
      chatWidget.initialize({ model });
      const el = container();
      chatWidget.render({ model, el });
      const messages = turnMessages("t1", {
        text: "Fees [1].",
        references: [reference(1)],
        done: withRounds ? { rounds: ROUNDS } : {},
      });
      for (const message of messages) model.custom(message);
      // The kernel's trait sync comes after the done message, with the rounds.
      model.set("turns", [
        { turn_id: "t1", question: "Q?", status: "done", text: "Fees [1].", rounds: ROUNDS },
      ]);
      await nextFrame();
      const rounds = el.querySelector("details.citelab-rounds");
      expect(rounds.hidden).toBe(false);
      expect(rounds.querySelector("summary").textContent).toBe("Prompt and rounds (1 round)");
      expect(rounds.textContent).toContain("You are the test agent.");
    }
  });

  test("messages sent before any view renders are not lost", async () => {
    const model = chatModel();
    chatWidget.initialize({ model });
    const messages = turnMessages("t1", {
      text: "Every token [1] counts.",
      references: [reference(1)],
      pieces: 6,
    });
    for (const message of messages.slice(0, 4)) model.custom(message); // before render
    const early = document.createElement("div");
    chatWidget.render({ model, el: early });
    for (const message of messages.slice(4, -1)) model.custom(message);
    const late = document.createElement("div"); // a second view opened mid-stream
    chatWidget.render({ model, el: late });
    await nextFrame();
    for (const el of [early, late]) {
      expect(el.querySelector(".citelab-answer").textContent.trim()).toBe(
        "Every token [1] counts.",
      );
    }
  });

  test("ask and feedback go to the kernel and resolve on its ack", async () => {
    const model = chatModel({ feedback_enabled: true });
    chatWidget.initialize({ model });
    const el = document.createElement("div");
    document.body.append(el);
    chatWidget.render({ model, el });
    el.querySelector(".citelab-ask input").value = "Hello?";
    el.querySelector(".citelab-ask").requestSubmit();
    const [ask] = model.sent;
    expect(ask).toMatchObject({ type: "ask", question: "Hello?", followup: false });
    expect(typeof ask.request_id).toBe("string");
    model.custom({ type: "ack", request_id: ask.request_id, error: "Conversation not found" });
    await nextFrame();
    expect(el.querySelector(".citelab-ask .citelab-form-error").textContent).toBe(
      "Conversation not found",
    );
    for (const message of turnMessages("t1", { text: "Hi.", references: [] }))
      model.custom(message);
    await nextFrame();
    el.querySelector(".citelab-thumb").click();
    const feedback = model.sent[1];
    expect(feedback).toMatchObject({ type: "feedback", turn_id: "t1", value: "up" });
    expect(feedback).not.toHaveProperty("comment");
    model.custom({ type: "ack", request_id: feedback.request_id });
    await nextFrame();
    expect(el.querySelector(".citelab-feedback-status").textContent).toBe(
      "Thanks for your feedback.",
    );
  });

  test("a reload draws the final state from the turns trait", async () => {
    const turns = [
      {
        turn_id: "t1",
        question: "Old?",
        followup: false,
        status: "done",
        text: "Saved [1].",
        references: [reference(1)],
        suggested_replies: [],
        conversation_id: "c",
        log_id: null,
        error: null,
        feedback: { value: "up" },
      },
    ];
    const model = chatModel({ turns, feedback_enabled: true });
    chatWidget.initialize({ model });
    const el = document.createElement("div");
    chatWidget.render({ model, el });
    expect(el.querySelector(".citelab-answer").textContent.trim()).toBe("Saved [1].");
    expect(el.querySelector("li.citelab-source")).not.toBeNull();
    expect(el.querySelector('.citelab-thumb[data-value="up"]').getAttribute("aria-pressed")).toBe(
      "true",
    );
    model.set("turns", []);
    await nextFrame();
    expect(el.querySelector(".citelab-turn")).toBeNull();
  });

  test("cleanup removes every listener", () => {
    const model = chatModel();
    const stop = chatWidget.initialize({ model });
    const unrender = chatWidget.render({ model, el: document.createElement("div") });
    unrender();
    stop();
    for (const name of ["msg:custom", "change:turns", "change:placeholder", "change:starter_questions"]) {
      expect(model.listenerCount(name)).toBe(0);
    }
    expect(model.listenerCount("change:feedback_enabled")).toBe(0);
  });

  test("a settings trait redraws every view", async () => {
    const model = chatModel({ _model_key: "k-settings" });
    chatWidget.initialize({ model: model.proxy() });
    const el = document.createElement("div");
    chatWidget.render({ model: model.proxy(), el });
    model.set("placeholder", "Ask the library");
    await nextFrame();
    expect(el.querySelector(".citelab-ask input").placeholder).toBe("Ask the library");
  });

  // #24: a corpus given alone gets an agent with starters drawn from it, as on the page.
  test("the agent's starter questions are chips that ask until the first question", async () => {
    const model = chatModel({ _model_key: "k-starters", starter_questions: ["Tell me about Bike"] });
    chatWidget.initialize({ model: model.proxy() });
    const el = container();
    chatWidget.render({ model: model.proxy(), el });
    await nextFrame();
    const chips = () => [...el.querySelectorAll(".citelab-starters .citelab-chip")];
    expect(chips().map((chip) => chip.textContent)).toEqual(["Tell me about Bike"]);
    expect(el.querySelector(".citelab-starters").hidden).toBe(false);
    chips()[0].click();
    expect(model.sent.at(-1)).toMatchObject({
      type: "ask",
      question: "Tell me about Bike",
      followup: false,
    });
    model.set("starter_questions", ["Where is the lock?", "Who has a key?"]);
    await nextFrame();
    expect(chips().map((chip) => chip.textContent)).toEqual(["Where is the lock?", "Who has a key?"]);
    for (const message of turnMessages("t1", { text: "In the drawer [1].", references: [reference(1)] }))
      model.custom(message);
    await nextFrame();
    expect(el.querySelector(".citelab-starters").hidden).toBe(true);
    // An older kernel without the trait offers none.
    const older = chatModel({ _model_key: "k-older" });
    chatWidget.initialize({ model: older.proxy() });
    const plain = container();
    chatWidget.render({ model: older.proxy(), el: plain });
    await nextFrame();
    expect(plain.querySelector(".citelab-starters").hidden).toBe(true);
  });
});

describe("state kept per model (anywidget gives every view its own proxy)", () => {
  const TEXT = "Every token [1] counts, early or late.";
  const messages = () => turnMessages("t1", { text: TEXT, references: [reference(1)], pieces: 8 });
  const shown = (el) => el.querySelector(".citelab-answer").textContent.trim();

  test("views rendered through other proxies share the store that initialize() fed", async () => {
    const model = chatModel({ _model_key: "k-share" });
    chatWidget.initialize({ model: model.proxy() });
    const all = messages();
    for (const message of all.slice(0, 4)) model.custom(message);
    const early = document.createElement("div");
    chatWidget.render({ model: model.proxy(), el: early });
    for (const message of all.slice(4, 7)) model.custom(message);
    const late = document.createElement("div"); // opened mid-stream
    chatWidget.render({ model: model.proxy(), el: late });
    await nextFrame();
    const streamed = all
      .slice(2, 7)
      .map((message) => message.text)
      .join("");
    expect(shown(early)).toBe(streamed);
    expect(shown(late)).toBe(streamed);
    expect(model.listenerCount("msg:custom")).toBe(1); // one store, whatever the views
    for (const message of all.slice(7)) model.custom(message);
    await nextFrame();
    expect(shown(late)).toBe(TEXT);
  });

  test("a question that streamed before any view existed shows in the first view", () => {
    const model = chatModel({ _model_key: "k-before" });
    chatWidget.initialize({ model: model.proxy() });
    const all = messages();
    for (const message of all.slice(0, -1)) model.custom(message);
    const el = document.createElement("div");
    chatWidget.render({ model: model.proxy(), el });
    expect(el.querySelector(".citelab-turn").dataset.status).toBe("streaming");
    expect(shown(el)).toBe(TEXT);
  });

  test("the key is the model's, not the object's; other models keep their own", async () => {
    const one = chatModel({ _model_key: "k-one" });
    const other = chatModel({ _model_key: "k-other" });
    chatWidget.initialize({ model: one.proxy() });
    chatWidget.initialize({ model: other.proxy() });
    for (const message of messages()) one.custom(message);
    const viewOfOne = document.createElement("div");
    const viewOfOther = document.createElement("div");
    chatWidget.render({ model: one.proxy(), el: viewOfOne });
    chatWidget.render({ model: other.proxy(), el: viewOfOther });
    expect(shown(viewOfOne)).toBe(TEXT);
    expect(viewOfOther.querySelector(".citelab-turn")).toBeNull();
  });

  test("re-initializing (a module reload) moves the listeners and keeps the turns", () => {
    const model = chatModel({ _model_key: "k-reload" });
    const first = model.proxy();
    const stopFirst = chatWidget.initialize({ model: first });
    const all = messages();
    for (const message of all.slice(0, 4)) model.custom(message);
    const stopSecond = chatWidget.initialize({ model: model.proxy() });
    expect(model.listenerCount("msg:custom")).toBe(1);
    stopFirst(); // the old module's cleanup, late: the new connection stays
    expect(model.listenerCount("msg:custom")).toBe(1);
    for (const message of all.slice(4, -1)) model.custom(message);
    const el = document.createElement("div");
    chatWidget.render({ model: model.proxy(), el });
    expect(shown(el)).toBe(TEXT);
    stopSecond();
    expect(model.listenerCount("msg:custom")).toBe(0);
    // Forgotten with its model: a new connection starts from the traits.
    chatWidget.initialize({ model: model.proxy() });
    const fresh = document.createElement("div");
    chatWidget.render({ model: model.proxy(), el: fresh });
    expect(fresh.querySelector(".citelab-turn")).toBeNull();
  });

  test("a Sources panel keys its store the same way", () => {
    const model = new FakeModel({ _model_key: "k-panel", turns: [], heading: "Sources" });
    sourcesWidget.initialize({ model: model.proxy() });
    for (const message of turnMessages("t1", { text: "A [1].", references: [reference(1)] }))
      model.custom(message);
    const el = document.createElement("div");
    sourcesWidget.render({ model: model.proxy(), el });
    expect(el.querySelectorAll("li.citelab-source")).toHaveLength(1);
  });
});

// JupyterLab redraws an output when its HTML is rewritten and never closes the old view.
describe("views that leave the page", () => {
  test("only the view on the page follows the store; a returning view catches up", async () => {
    const model = chatModel({ _model_key: "k-redraw" });
    chatWidget.initialize({ model: model.proxy() });
    const store = storeOf(model);
    const views = [];
    for (let turn = 1; turn <= 5; turn++) {
      const el = container();
      chatWidget.render({ model: model.proxy(), el }); // the redraw: a new view…
      views.at(-1)?.remove(); // …and the old one's element leaves, its view still alive
      views.push(el);
      const text = `Answer ${turn} [1].`;
      for (const message of turnMessages(`t${turn}`, {
        text,
        references: [reference(1)],
        followup: turn > 1,
      }))
        model.custom(message);
      await nextFrame();
      expect(store.listeners.size).toBe(1);
    }
    const current = views.at(-1);
    expect(current.querySelectorAll(".citelab-turn")).toHaveLength(5);
    const old = views[0];
    expect(old.querySelectorAll(".citelab-turn")).toHaveLength(1); // stopped when it left
    document.body.append(old); // a cell scrolled back into view ("full" windowing)
    await nextFrame();
    expect(store.listeners.size).toBe(2);
    expect(old.querySelectorAll(".citelab-turn")).toHaveLength(5);
  });

  test("the cleanup anywidget may call stops the view for good", async () => {
    const model = chatModel({ _model_key: "k-cleanup" });
    chatWidget.initialize({ model: model.proxy() });
    const el = container();
    const cleanup = chatWidget.render({ model: model.proxy(), el });
    cleanup();
    expect(storeOf(model).listeners.size).toBe(0);
    el.remove();
    document.body.append(el); // attached again: a closed view stays closed
    await nextFrame();
    expect(storeOf(model).listeners.size).toBe(0);
  });

  test("a detached Sources panel stops answering cite events", () => {
    const model = new FakeModel({ _model_key: "k-panel-cite", turns: [], heading: "Sources" });
    sourcesWidget.initialize({ model: model.proxy() });
    for (const message of turnMessages("t1", { text: "A [1].", references: [reference(1)] }))
      model.custom(message);
    const el = container();
    sourcesWidget.render({ model: model.proxy(), el });
    const cite = () =>
      document.dispatchEvent(
        new CustomEvent("citelab:cite", { detail: { turnId: "t1", number: 1 } }),
      );
    cite();
    expect(el.querySelector(".citelab-source-target")).not.toBeNull();
    el.querySelector(".citelab-source-target").classList.remove("citelab-source-target");
    el.remove();
    cite();
    expect(el.querySelector(".citelab-source-target")).toBeNull();
  });
});

describe("sources panel widget", () => {
  test("shows only the shared references of the forwarded events", async () => {
    const model = new FakeModel({ turns: [], heading: "Where this comes from" });
    sourcesWidget.initialize({ model });
    for (const message of turnMessages("t1", {
      text: "A [1].",
      references: [reference(1), reference(2)],
    }))
      model.custom(message);
    const el = document.createElement("div");
    sourcesWidget.render({ model, el });
    expect(el.querySelector("h3").textContent).toBe("Where this comes from");
    expect(el.querySelectorAll("li.citelab-source")).toHaveLength(2);
    expect(el.querySelector(".citelab-answer")).toBeNull();
  });
});

describe("message view widget", () => {
  test("renders the message trait and follows its changes; chips send a reply", async () => {
    const message = (title) => ({
      role: "assistant",
      content: [
        { type: "text", text: "Hello [1]." },
        {
          type: "resource_link",
          uri: "https://example.org",
          name: "x",
          title,
          annotations: { priority: 1 },
        },
      ],
      _meta: { "drupal.org/ai.suggested_replies": [{ label: "More" }] },
    });
    const model = new FakeModel({ message: message("First") });
    const disconnect = messageWidget.initialize({ model });
    const el = document.createElement("div");
    const stop = messageWidget.render({ model, el });
    expect(el.querySelector(".citelab-source-title").textContent).toBe("First");
    model.set("message", message("Second"));
    await nextFrame();
    expect(el.querySelector(".citelab-source-title").textContent).toBe("Second");
    el.querySelector(".citelab-chip").click();
    expect(model.sent).toEqual([{ type: "reply", text: "More" }]);
    stop();
    disconnect();
    expect(model.listenerCount("change:message")).toBe(0);
    expect(model.listenerCount("change:violations")).toBe(0);
  });

  test("lists the kernel's violations, escaped, under a warning that opens", async () => {
    const violations = [
      {
        path: 'content[0]._meta["drupal.org/ai.citations"][0].sourceUri',
        code: "unknown_source",
        message: "<img src=x onerror=alert(1)> is not a source",
      },
    ];
    const model = new FakeModel({ _model_key: "m-violations", message: null, violations });
    messageWidget.initialize({ model: model.proxy() });
    const el = container();
    messageWidget.render({ model: model.proxy(), el });
    const details = el.querySelector("details.citelab-violations");
    expect(details.open).toBe(false);
    expect(details.querySelector("summary").textContent).toBe("1 contract violation");
    expect(details.querySelector("summary svg.citelab-icon-warning")).not.toBeNull();
    const item = details.querySelector("li.citelab-violation");
    expect(item.dataset.code).toBe("unknown_source");
    expect(item.querySelector("code").textContent).toBe(violations[0].path);
    expect(item.textContent).toContain("<img src=x onerror=alert(1)> is not a source");
    expect(el.querySelector("img")).toBeNull();
    details.open = true;
    model.set("violations", [...violations, { path: "$", code: "wrong_value", message: "m" }]);
    await nextFrame();
    const again = el.querySelector("details.citelab-violations");
    expect(again.querySelector("summary").textContent).toBe("2 contract violations");
    expect(again.open).toBe(true); // the person's choice survives a redraw
    model.set("violations", []);
    await nextFrame();
    expect(el.querySelector(".citelab-violations")).toBeNull();
  });

  test("a view rendered with another proxy of the model follows the same state", async () => {
    const model = new FakeModel({ _model_key: "m-proxies", message: null, violations: [] });
    messageWidget.initialize({ model: model.proxy() });
    const el = document.createElement("div");
    messageWidget.render({ model: model.proxy(), el });
    model.set("message", {
      role: "assistant",
      content: [{ type: "text", text: "Now shown." }],
    });
    await nextFrame();
    expect(el.querySelector(".citelab-answer").textContent.trim()).toBe("Now shown.");
    expect(model.listenerCount("change:message")).toBe(1); // once per model, not per view
  });
});
