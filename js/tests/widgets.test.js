import { describe, expect, test } from "vitest";
import chatWidget from "../widget_chat.js";
import messageWidget from "../widget_message.js";
import sourcesWidget from "../widget_sources.js";
import { FakeModel, reference, turnMessages } from "./helpers.js";

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

describe("chat widget", () => {
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
    expect(model.listenerCount("msg:custom")).toBe(0);
    expect(model.listenerCount("change:turns")).toBe(0);
    expect(model.listenerCount("change:placeholder")).toBe(0);
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
  test("renders the message trait and follows its changes; chips send a reply", () => {
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
    messageWidget.initialize({ model });
    const el = document.createElement("div");
    const stop = messageWidget.render({ model, el });
    expect(el.querySelector(".citelab-source-title").textContent).toBe("First");
    model.set("message", message("Second"));
    expect(el.querySelector(".citelab-source-title").textContent).toBe("Second");
    el.querySelector(".citelab-chip").click();
    expect(model.sent).toEqual([{ type: "reply", text: "More" }]);
    stop();
    expect(model.listenerCount("change:message")).toBe(0);
  });
});
