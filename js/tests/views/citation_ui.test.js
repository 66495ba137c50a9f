// Issue #13's front end: the shared list shows the numbers the text uses, the hover/focus
// card, cited-span highlighting, retrieved-not-yet-cited sources, badges, the document view,
// the chat controls (Stop, New conversation, copy), the disconnected state and the rounds.
import { describe, expect, test, vi } from "vitest";
import { ChatView } from "../../views/chat_view.js";
import { ChatStore } from "../../state/store.js";
import widgetChat, { DISCONNECTED_MESSAGE } from "../../entries/widget_chat.js";
import { CHECK_TIMEOUT_MS } from "../../kernel/kernel_watch.js";
import {
  container,
  FakeModel,
  FakeSignal,
  reference,
  syncSchedule,
  syncSlices,
} from "../helpers.js";

function chat(hostChanges = {}) {
  const store = new ChatStore();
  const calls = { ask: [], stop: 0, fresh: 0, copied: [], documents: [] };
  const host = {
    settings: () => ({ feedbackEnabled: true, placeholder: "Ask", showSources: true }),
    ask: async (question, followup) => {
      calls.ask.push({ question, followup });
      return {};
    },
    feedback: async () => ({}),
    stop: async () => {
      calls.stop += 1;
      return {};
    },
    newConversation: async () => {
      calls.fresh += 1;
      store.reset();
      return {};
    },
    copy: async (text) => {
      calls.copied.push(text);
    },
    document: async (ref) => {
      calls.documents.push(ref.uri);
      return {
        document: {
          title: ref.title,
          content: `Intro. ${ref.passage} Outro.`,
          url: "https://uni.example/x",
        },
      };
    },
    ...hostChanges,
  };
  const root = container();
  const view = new ChatView(root, store, host, { schedule: syncSchedule, slices: syncSlices });
  return { store, root, view, calls };
}

function turn(store, id, { question = "Q?", followup = true, text, refs, done = true, extra }) {
  store.receive({ type: "turn_start", turn_id: id, question, followup });
  store.receive({ type: "references", turn_id: id, references: refs });
  store.receive({ type: "token", turn_id: id, text });
  if (done) {
    store.receive({
      type: "done",
      turn_id: id,
      text,
      references: refs,
      suggested_replies: [],
      message: {},
      conversation_id: "c1",
      turn: 1,
      ...extra,
    });
  }
}

const A = { entity_id: "a", title: "Data Science", detail: "MSc" };
const B = { entity_id: "b", title: "Semester fee" };
const C = { entity_id: "c", title: "Computer Science", detail: "BSc" };

// Every marker in the answers, as [turn, number, number shown on the card it points at].
function markerTargets(root) {
  return [...root.querySelectorAll(".citelab-answer a[data-ref-index]")].map((link) => {
    const card = document.getElementById(link.getAttribute("href").slice(1));
    return [
      link.dataset.refTurn,
      link.dataset.refIndex,
      card.querySelector(".citelab-source-number").textContent,
    ];
  });
}

function listNumbers(root) {
  return [...root.querySelectorAll(".citelab-chat-sources li.citelab-source")].map(
    (card) => card.querySelector(".citelab-source-number").textContent,
  );
}

describe("the shared list shows the numbers the text uses", () => {
  test("conversation-wide numbers: a card per source, numbered as every turn's markers", () => {
    const { store, root } = chat();
    turn(store, "t1", {
      followup: false,
      text: "Fee [1]. Data [2].",
      refs: [reference(1, B), reference(2, A)],
    });
    turn(store, "t2", { text: "Data [2]. CS [3].", refs: [reference(2, A), reference(3, C)] });
    turn(store, "t3", { text: "Fee [1], CS [3].", refs: [reference(1, B), reference(3, C)] });
    expect(listNumbers(root)).toEqual(["[1]", "[2]", "[3]"]);
    for (const [, number, shown] of markerTargets(root)) expect(shown).toBe(`[${number}]`);
    expect(markerTargets(root)).toHaveLength(6);
  });

  test("per-turn numbering (the ablation): a repeated number is qualified, never wrong", () => {
    const { store, root } = chat();
    turn(store, "t1", { followup: false, text: "Data [1].", refs: [reference(1, A)] });
    turn(store, "t2", { text: "Fee [1]. Data [2].", refs: [reference(1, B), reference(2, A)] });
    expect(listNumbers(root)).toEqual(["[1]", "[1] (answer 2)"]);
    const aCard = root.querySelector('li.citelab-source[data-ref-turn="t1"]');
    expect(aCard.querySelector(".citelab-source-alias").textContent).toBe("also [2] in answer 2");
    const targets = markerTargets(root);
    // t2's [1] is the fee (its own card), t2's [2] is Data Science's card from turn 1.
    expect(targets).toEqual([
      ["t1", "1", "[1]"],
      ["t2", "1", "[1] (answer 2)"],
      ["t2", "2", "[1]"],
    ]);
  });

  test("while streaming, sources are retrieved, not yet cited; done keeps only the cited", () => {
    const { store, root } = chat();
    turn(store, "t1", {
      followup: false,
      text: "Data [1]",
      refs: [reference(1, A), reference(2, B), reference(3, C)],
      done: false,
    });
    const cards = root.querySelectorAll("li.citelab-source");
    expect(cards).toHaveLength(3);
    for (const card of cards) {
      expect(card.dataset.state).toBe("retrieved");
      expect(card.classList.contains("citelab-source-retrieved")).toBe(true);
      expect(card.querySelector(".citelab-source-state").textContent).toBe(
        "Retrieved, not yet cited",
      );
    }
    store.receive({
      type: "done",
      turn_id: "t1",
      text: "Data [1].",
      references: [reference(1, A)],
      suggested_replies: [],
      message: {},
      conversation_id: "c1",
    });
    const final = root.querySelectorAll("li.citelab-source");
    expect(final).toHaveLength(1);
    expect(final[0].dataset.state).toBe("cited");
    expect(final[0].querySelector(".citelab-source-state")).toBeNull();
  });

  test("a failed turn shows none of its retrieved sources", () => {
    const { store, root } = chat();
    turn(store, "t1", { followup: false, text: "x", refs: [reference(1, A)], done: false });
    store.receive({ type: "error", turn_id: "t1", code: "cancelled", message: "Stopped." });
    expect(root.querySelectorAll("li.citelab-source")).toHaveLength(0);
  });

  test("cards show the detail, a restricted badge with an SVG icon, and the passage", () => {
    const { store, root } = chat();
    const restricted = reference(1, {
      ...A,
      restricted: true,
      passage: "The fee is 312 euros.",
      snippet: "Opening of the page.",
    });
    turn(store, "t1", { followup: false, text: "Fee [1].", refs: [restricted] });
    const card = root.querySelector("li.citelab-source");
    expect(card.querySelector(".citelab-source-detail").textContent).toBe("MSc");
    const badge = card.querySelector(".citelab-badge-restricted");
    expect(badge.textContent).toBe("Restricted");
    expect(badge.querySelector("svg[aria-hidden=true]")).not.toBeNull();
    expect(card.querySelector(".citelab-source-snippet").textContent).toBe("The fee is 312 euros.");
    expect(card.querySelector(".citelab-source-where").textContent).toBe("example.org");
    // No emoji anywhere in the chat (they render as empty boxes without an emoji font).
    expect(root.textContent).not.toMatch(/\p{Extended_Pictographic}/u);
  });
});

describe("the hover/focus card on [n]", () => {
  test("focus shows title, detail, domain and passage; the link is described by it", () => {
    const { store, root } = chat();
    const ref = reference(1, { ...A, passage: "Tuition is 312 euros.", url: "https://uni.org/ds" });
    turn(store, "t1", { followup: false, text: "It costs 312 euros [1].", refs: [ref] });
    const link = root.querySelector('.citelab-answer a[data-ref-index="1"]');
    const card = root.querySelector(".citelab-hovercard");
    expect(card.hidden).toBe(true);
    link.focus();
    expect(card.hidden).toBe(false);
    expect(card.getAttribute("role")).toBe("tooltip");
    expect(link.getAttribute("aria-describedby")).toBe(card.id);
    expect(card.querySelector(".citelab-hovercard-title").textContent).toBe("[1] Data Science");
    expect(card.querySelector(".citelab-source-detail").textContent).toBe("MSc");
    expect(card.querySelector(".citelab-hovercard-where").textContent).toBe("uni.org");
    expect(card.querySelector(".citelab-hovercard-passage").textContent).toBe(
      "Tuition is 312 euros.",
    );
    link.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(card.hidden).toBe(true);
    expect(link.hasAttribute("aria-describedby")).toBe(false);
  });

  test("the pointer shows it, it stays while the pointer is on it, and leaves after", () => {
    vi.useFakeTimers();
    try {
      const { store, root } = chat();
      turn(store, "t1", { followup: false, text: "A [1].", refs: [reference(1, B)] });
      const link = root.querySelector('.citelab-answer a[data-ref-index="1"]');
      const card = root.querySelector(".citelab-hovercard");
      link.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      expect(card.hidden).toBe(false);
      link.dispatchEvent(new MouseEvent("mouseout", { bubbles: true, relatedTarget: card }));
      card.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      vi.advanceTimersByTime(1000);
      expect(card.hidden).toBe(false);
      card.dispatchEvent(new MouseEvent("mouseout", { bubbles: true, relatedTarget: root }));
      vi.advanceTimersByTime(1000);
      expect(card.hidden).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  test("a marker without a source shows no card; a streaming source says so", () => {
    const { store, root } = chat();
    turn(store, "t1", { followup: false, text: "A [1]", refs: [reference(1, B)], done: false });
    const link = root.querySelector('.citelab-answer a[data-ref-index="1"]');
    link.focus();
    const card = root.querySelector(".citelab-hovercard");
    expect(card.textContent).toContain("Retrieved, not yet cited");
  });

  test("the cited span is marked at done and highlighted while its marker is pointed at", () => {
    const { store, root } = chat();
    const text = "The fee is 312 euros [1]. Other text.";
    const refs = [reference(1, B)];
    const message = {
      content: [
        {
          type: "text",
          text,
          _meta: {
            "drupal.org/ai.citations": [
              {
                sourceUri: refs[0].uri,
                citedText: "The fee is 312 euros",
                startIndex: 0,
                endIndex: 20,
              },
            ],
          },
        },
      ],
    };
    turn(store, "t1", { followup: false, text, refs, extra: { message } });
    const mark = root.querySelector(".citelab-answer mark.citelab-cited");
    expect(mark.textContent).toBe("The fee is 312 euros");
    expect(mark.dataset.sources).toBe("1");
    root.querySelector('.citelab-answer a[data-ref-index="1"]').focus();
    expect(mark.classList.contains("citelab-cited-active")).toBe(true);
    // The card in the list is highlighted too.
    expect(root.querySelector("li.citelab-source").classList).toContain("citelab-source-hover");
  });
});

describe("chat controls", () => {
  test("Stop shows while an answer streams; New conversation starts over", async () => {
    const { store, root, calls } = chat();
    const stop = root.querySelector("button.citelab-stop");
    const fresh = root.querySelector("button.citelab-new");
    const ask = root.querySelector("form.citelab-ask");
    expect(root.querySelector(".citelab-controls").hidden).toBe(true);
    turn(store, "t1", { followup: false, text: "A", refs: [], done: false });
    expect(stop.hidden).toBe(false);
    expect(ask.hidden).toBe(true); // nothing erases the conversation silently
    stop.click();
    await Promise.resolve();
    expect(calls.stop).toBe(1);
    store.receive({ type: "error", turn_id: "t1", code: "cancelled", message: "Stopped." });
    expect(stop.hidden).toBe(true);
    expect(fresh.hidden).toBe(false);
    expect(root.querySelector("form.citelab-followup").hidden).toBe(false);
    fresh.click();
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve));
    expect(calls.fresh).toBe(1);
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(0);
    expect(ask.hidden).toBe(false);
    expect(document.activeElement).toBe(ask.querySelector("input"));
  });

  // #24: Stop before any text showed a red "Error: Stopped: the answer above is incomplete."
  // with no answer above it.
  test.each([
    ["the page", "stopped", "Stopped: the answer above is incomplete."],
    ["the kernel", "cancelled", "The question was cancelled."],
  ])("Stop before any text (%s): said plainly, no error, the question kept", async (_, code, text) => {
    const { store, root, calls } = chat();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Fees?", followup: false });
    store.receive({ type: "error", turn_id: "t1", code, message: text });
    const turn = root.querySelector(".citelab-turn");
    expect(turn.querySelector(".citelab-error").hidden).toBe(true);
    expect(root.querySelector("[role=alert]:not([hidden])")).toBeNull();
    const stopped = turn.querySelector(".citelab-stopped");
    expect(stopped.hidden).toBe(false);
    expect(stopped.textContent).toContain("You stopped this question before an answer began.");
    expect(turn.querySelector(".citelab-question").textContent).toBe("Fees?");
    stopped.querySelector("button.citelab-ask-again").click();
    await Promise.resolve();
    expect(calls.ask).toEqual([{ question: "Fees?", followup: false }]);
  });

  test("an error that is not a stop still says Error, as an alert", () => {
    const { store, root } = chat();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Fees?", followup: false });
    store.receive({ type: "error", turn_id: "t1", code: "model_error", message: "It broke." });
    const error = root.querySelector(".citelab-turn .citelab-error");
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("Error: It broke.");
    expect(root.querySelector(".citelab-turn .citelab-stopped").hidden).toBe(true);
  });

  test("copy the answer as Markdown and as JSON", async () => {
    const { store, root, calls } = chat();
    const message = { role: "assistant", content: [{ type: "text", text: "A [1]." }] };
    turn(store, "t1", {
      followup: false,
      text: "A [1].",
      refs: [reference(1)],
      extra: { message },
    });
    root.querySelector("button.citelab-copy-markdown").click();
    await new Promise((resolve) => setTimeout(resolve));
    root.querySelector("button.citelab-copy-json").click();
    await new Promise((resolve) => setTimeout(resolve));
    expect(calls.copied[0]).toBe(
      "A [1].\n\nSources:\n\n- [1] [Source 1](<https://example.org/node/1>)\n",
    );
    expect(JSON.parse(calls.copied[1])).toEqual(message);
    expect(root.querySelector(".citelab-copy-status").textContent).toBe("Copied as JSON.");
  });

  test("a refused clipboard is reported, not silent", async () => {
    const { store, root } = chat({
      copy: async () => {
        throw new Error("denied");
      },
    });
    turn(store, "t1", { followup: false, text: "A.", refs: [] });
    root.querySelector("button.citelab-copy-markdown").click();
    await new Promise((resolve) => setTimeout(resolve));
    const status = root.querySelector(".citelab-copy-status");
    expect(status.textContent).toBe("Could not copy: denied");
    expect(status.dataset.state).toBe("error");
  });

  test("after the kernel is gone, inputs are disabled and a plain message says why", () => {
    const { store, root } = chat();
    turn(store, "t1", { followup: false, text: "A.", refs: [] });
    store.setDisconnected("The kernel restarted.");
    const notice = root.querySelector(".citelab-notice");
    expect(notice.hidden).toBe(false);
    expect(notice.textContent).toBe("The kernel restarted.");
    for (const control of root.querySelectorAll(".citelab-followup input, .citelab-followup button"))
      expect(control.disabled).toBe(true);
    expect(root.querySelector("button.citelab-new").disabled).toBe(true);
  });

  test("the widget notices JupyterLab marking its view disconnected", async () => {
    const model = new FakeModel({ turns: [], _model_key: "f".repeat(32) });
    const cleanup = widgetChat.initialize({ model: model.proxy() });
    const el = container();
    const dispose = widgetChat.render({ model: model.proxy(), el });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    el.classList.add("jupyter-widgets-disconnected");
    await new Promise((resolve) => setTimeout(resolve));
    await new Promise((resolve) => requestAnimationFrame(resolve));
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    expect(el.querySelector(".citelab-ask input").disabled).toBe(true);
    dispose();
    cleanup();
  });

  test("the widget notices its model's comm going dead (a kernel restart)", async () => {
    const model = new FakeModel({ turns: [], _model_key: "d".repeat(32) });
    const cleanup = widgetChat.initialize({ model: model.proxy() });
    const el = container();
    const dispose = widgetChat.render({ model: model.proxy(), el });
    model.emit("comm_live_update");
    await new Promise((resolve) => requestAnimationFrame(resolve));
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    expect(el.querySelector(".citelab-ask button").disabled).toBe(true);
    dispose();
    cleanup();
    expect(model.listenerCount("comm_live_update")).toBe(0);
  });

  // JupyterLab's notebook widget manager, as far as the chat reads it (kernel_watch.js).
  function notebookManager(kernelId = "k1") {
    const sessionContext = {
      session: { kernel: { id: kernelId } },
      statusChanged: new FakeSignal(),
      kernelChanged: new FakeSignal(),
    };
    return { context: { sessionContext } };
  }

  async function widgetWith(manager, key) {
    const model = new FakeModel({ turns: [], _model_key: key.repeat(32) });
    model.widget_manager = manager;
    const cleanup = widgetChat.initialize({ model: model.proxy() });
    const el = container();
    const dispose = widgetChat.render({ model: model.proxy(), el });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    return { model, el, frame, close: () => (dispose(), cleanup()) };
  }

  test("a restart from outside JupyterLab (the session says `starting`) is noticed", async () => {
    const manager = notebookManager();
    const session = manager.context.sessionContext;
    const { el, frame, close } = await widgetWith(manager, "a");
    for (const status of ["busy", "idle", "unknown"]) session.statusChanged.emit(status);
    await frame();
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    session.statusChanged.emit("starting");
    await frame();
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    expect(el.querySelector(".citelab-ask input").disabled).toBe(true);
    close();
    expect(session.statusChanged.slots.size).toBe(0);
    expect(session.kernelChanged.slots.size).toBe(0);
  });

  // The kernel process's messages carry its session id in `header.session`.
  function kernelMessage(session, parent = { msg_id: "r1" }) {
    return { header: { session, msg_type: "status" }, parent_header: parent, content: {} };
  }

  function sessionWatched(manager, key, kernelSession = "s-old") {
    const model = new FakeModel({ turns: [], _model_key: key.repeat(32), _kernel_session: kernelSession });
    model.widget_manager = manager;
    const cleanup = widgetChat.initialize({ model: model.proxy() });
    const el = container();
    const dispose = widgetChat.render({ model: model.proxy(), el });
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    return { el, frame, close: () => (dispose(), cleanup()) };
  }

  test("a message from another kernel session (a restart nothing announced) is a lost kernel", async () => {
    const manager = notebookManager();
    const session = manager.context.sessionContext;
    session.iopubMessage = new FakeSignal();
    const { el, frame, close } = sessionWatched(manager, "6");
    // Before any message of its own session is seen, another session proves nothing (the
    // trait might not name what this kernel writes); messages that answer no request (the
    // server's own status reports) never count.
    session.iopubMessage.emit(kernelMessage("s-new"));
    session.iopubMessage.emit(kernelMessage("s-old", {}));
    await frame();
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    session.iopubMessage.emit(kernelMessage("s-old"));
    session.iopubMessage.emit(kernelMessage("s-other-server", {}));
    await frame();
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    session.iopubMessage.emit(kernelMessage("s-new"));
    await frame();
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    close();
    expect(session.iopubMessage.slots.size).toBe(0);
  });

  test("focus in the chat asks the kernel for its info, one request at a time; a new session is a lost kernel", async () => {
    const manager = notebookManager();
    const session = manager.context.sessionContext;
    session.iopubMessage = new FakeSignal();
    const asked = [];
    session.session.kernel.requestKernelInfo = () =>
      new Promise((resolve) => asked.push(resolve));
    const { el, frame, close } = sessionWatched(manager, "5");
    const input = el.querySelector(".citelab-ask input");
    const focus = () => input.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
    const settle = () => new Promise((resolve) => setTimeout(resolve));
    focus();
    focus(); // while the first waits for its reply: no second request
    expect(asked.length).toBe(1);
    asked[0](kernelMessage("s-old"));
    await settle();
    await frame();
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    focus(); // the kernel was restarted from elsewhere meanwhile
    expect(asked.length).toBe(2);
    asked[1](kernelMessage("s-new"));
    await settle();
    await frame();
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    expect(input.disabled).toBe(true);
    focus(); // lost: nothing more is asked
    expect(asked.length).toBe(2);
    close();
  });

  test("a check whose request gets no reply (sent as the old process went) lets the next one ask again", async () => {
    const manager = notebookManager();
    const session = manager.context.sessionContext;
    const asked = [];
    session.session.kernel.requestKernelInfo = () => new Promise((resolve) => asked.push(resolve));
    const { el, frame, close } = sessionWatched(manager, "3");
    const input = el.querySelector(".citelab-ask input");
    const focus = () => input.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      focus();
      asked[0](kernelMessage("s-old")); // confirms the session
      await vi.advanceTimersByTimeAsync(0);
      focus(); // this request is lost: no reply ever comes
      await vi.advanceTimersByTimeAsync(CHECK_TIMEOUT_MS - 1);
      focus();
      expect(asked.length).toBe(2); // still waiting for it
      await vi.advanceTimersByTimeAsync(1);
      focus();
      expect(asked.length).toBe(3);
      asked[2](kernelMessage("s-new"));
      await vi.advanceTimersByTimeAsync(0);
    } finally {
      vi.useRealTimers();
    }
    await frame();
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    close();
  });

  test("without a kernel session (outside IPython) focus asks nothing", async () => {
    const manager = notebookManager();
    let replies = 0;
    manager.context.sessionContext.session.kernel.requestKernelInfo = async () => {
      replies += 1;
      return kernelMessage("s-new");
    };
    const { el, frame, close } = sessionWatched(manager, "4", "");
    el.querySelector(".citelab-ask input").dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
    await new Promise((resolve) => setTimeout(resolve));
    await frame();
    expect(replies).toBe(0);
    expect(el.querySelector(".citelab-notice").hidden).toBe(true);
    close();
  });

  test("another kernel (or none) is a lost kernel; the same kernel restarted in place is not", async () => {
    for (const [newValue, lost] of [
      [{ id: "k1" }, false],
      [{ id: "k2" }, true],
      [null, true],
    ]) {
      const manager = notebookManager("k1");
      const { el, frame, close } = await widgetWith(manager, lost ? "b" : "c");
      manager.context.sessionContext.kernelChanged.emit({ name: "kernel", oldValue: null, newValue });
      await frame();
      expect(el.querySelector(".citelab-notice").hidden).toBe(!lost);
      close();
    }
  });

  test("a manager bound to one kernel (a console) is watched through its kernel", async () => {
    const kernel = { id: "k1", statusChanged: new FakeSignal() };
    const { el, frame, close } = await widgetWith({ kernel }, "9");
    kernel.statusChanged.emit("restarting");
    await frame();
    expect(el.querySelector(".citelab-notice").textContent).toBe(DISCONNECTED_MESSAGE);
    close();
    expect(kernel.statusChanged.slots.size).toBe(0);
  });

  test("a question sent as the kernel goes is handed back with the message, not dropped", async () => {
    const manager = notebookManager();
    const { model, el, frame, close } = await widgetWith(manager, "8");
    const input = el.querySelector(".citelab-ask input");
    input.value = "When are fees due?";
    el.querySelector("form.citelab-ask").requestSubmit();
    expect(model.sent.map((message) => message.type)).toEqual(["ask"]);
    expect(input.value).toBe(""); // sent: the box waits for the kernel's ack
    manager.context.sessionContext.statusChanged.emit("starting"); // no ack will ever come
    await new Promise((resolve) => setTimeout(resolve));
    await frame();
    expect(input.value).toBe("When are fees due?");
    expect(el.querySelector(".citelab-ask .citelab-form-error")
      ?.textContent).toBe(DISCONNECTED_MESSAGE);
    // Asked again (a shortcut submits a form whose controls are disabled): not sent at all.
    el.querySelector("form.citelab-ask").requestSubmit();
    await new Promise((resolve) => setTimeout(resolve));
    expect(model.sent.length).toBe(1);
    expect(input.value).toBe("When are fees due?");
    close();
  });

  test("an answer streaming when the kernel goes is shown as interrupted", async () => {
    const { model, el, frame, close } = await widgetWith(notebookManager(), "7");
    model.custom({ type: "turn_start", turn_id: "t1", question: "Q?", followup: false });
    model.custom({ type: "token", turn_id: "t1", text: "Part" });
    await frame();
    expect(el.querySelector(".citelab-turn").dataset.status).toBe("streaming");
    model.emit("comm_live_update");
    await frame();
    const turnEl = el.querySelector(".citelab-turn");
    expect(turnEl.dataset.status).toBe("error");
    expect(turnEl.querySelector(".citelab-error").textContent).toBe(
      "Error: the kernel went away before this answer finished.",
    );
    expect(turnEl.querySelector(".citelab-answer").textContent).toContain("Part");
    close();
  });

  test("the widget's Stop and New conversation are requests the kernel acks", async () => {
    const model = new FakeModel({ turns: [], _model_key: "e".repeat(32) });
    const cleanup = widgetChat.initialize({ model: model.proxy() });
    const el = container();
    const dispose = widgetChat.render({ model: model.proxy(), el });
    model.custom({ type: "turn_start", turn_id: "k1", question: "Q", followup: false });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    el.querySelector("button.citelab-stop").click();
    expect(model.sent.at(-1).type).toBe("stop");
    model.custom({ type: "ack", request_id: model.sent.at(-1).request_id });
    model.custom({ type: "error", turn_id: "k1", code: "cancelled", message: "Cancelled." });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    el.querySelector("button.citelab-new").click();
    expect(model.sent.at(-1).type).toBe("new_conversation");
    model.custom({ type: "ack", request_id: model.sent.at(-1).request_id });
    model.custom({ type: "reset" });
    await new Promise((resolve) => setTimeout(resolve));
    await new Promise((resolve) => requestAnimationFrame(resolve));
    expect(el.querySelectorAll(".citelab-turn")).toHaveLength(0);
    dispose();
    cleanup();
  });
});

describe("the local document view and the rounds", () => {
  test("Read opens the entity's document with the passage marked; Escape closes it", async () => {
    const { store, root, calls } = chat();
    const ref = reference(1, {
      ...A,
      uri: "entity:program/ds",
      url: "https://study.uni.example/ds",
      passage: "Fee: 312 euros.",
    });
    turn(store, "t1", { followup: false, text: "Fee [1].", refs: [ref] });
    const card = root.querySelector("li.citelab-source");
    // The page on a never-resolving host is no link; the Read button shows the document.
    expect(card.querySelector("a.citelab-source-title")).toBeNull();
    const read = card.querySelector("button.citelab-source-read");
    read.focus();
    read.click();
    await new Promise((resolve) => setTimeout(resolve));
    expect(calls.documents).toEqual(["entity:program/ds"]);
    const view = root.querySelector(".citelab-document");
    expect(view.hidden).toBe(false);
    expect(view.getAttribute("role")).toBe("dialog");
    expect(view.querySelector("mark.citelab-document-passage").textContent).toBe("Fee: 312 euros.");
    expect(view.querySelector(".citelab-document-text").textContent).toBe(
      "Intro. Fee: 312 euros. Outro.",
    );
    view.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(view.hidden).toBe(true);
    expect(document.activeElement).toBe(read);
  });

  test("a refused document says why", async () => {
    const { store, root } = chat({ document: async () => ({ error: "Not yours." }) });
    const ref = reference(1, { uri: "entity:node/9" });
    turn(store, "t1", { followup: false, text: "A [1].", refs: [ref] });
    root.querySelector("button.citelab-source-read").click();
    await new Promise((resolve) => setTimeout(resolve));
    expect(root.querySelector(".citelab-document-status").textContent).toBe(
      "Could not open the document: Not yours.",
    );
  });

  test("prompt and rounds: system prompt, tool calls, rewritten messages, raw text", () => {
    const { store, root } = chat();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Q", followup: false });
    store.setSnapshot([
      {
        turn_id: "t1",
        question: "Q",
        status: "done",
        text: "A [1].",
        references: [],
        rounds: {
          system_prompt: "You are <b>kind</b>.",
          forced: [{ name: "rag_search", arguments: '{"query":"q"}', message: "[1] Fee" }],
          rounds: [
            {
              index: 1,
              finish_reason: "stop",
              text: "A [3].",
              tool_calls: [],
            },
          ],
        },
      },
    ]);
    const details = root.querySelector("details.citelab-rounds");
    expect(details.hidden).toBe(false);
    expect(details.open).toBe(false);
    expect(details.querySelector("summary").textContent).toBe("Prompt and rounds (1 round)");
    const texts = [...details.querySelectorAll("pre")].map((pre) => pre.textContent);
    expect(texts).toEqual(["You are <b>kind</b>.", '{"query":"q"}', "[1] Fee", "A [3]."]);
    expect(details.querySelector("b")).toBeNull();
  });
});
