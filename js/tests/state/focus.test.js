import { describe, expect, test } from "vitest";
import { ChatView } from "../../views/chat_view.js";
import { ChatStore } from "../../state/store.js";
import { container, syncSchedule, turnMessages } from "../helpers.js";

const host = {
  settings: () => ({ feedbackEnabled: false, placeholder: "Ask", showSources: false }),
  ask: async () => ({}),
  feedback: async () => ({}),
};
const afterEvents = () => new Promise((resolve) => setTimeout(resolve, 5));

function view(store, parent) {
  const root = document.createElement("div");
  const chat = new ChatView(root, store, host, { schedule: syncSchedule });
  parent?.append(root);
  return { root, chat, ask: root.querySelector(".citelab-ask input") };
}

function type(input, text) {
  input.focus();
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function feed(store, messages) {
  for (const message of messages) store.receive(message);
}

describe("question boxes across a view that replaces another", () => {
  test("the new view takes the half-typed question and the focus", async () => {
    const store = new ChatStore();
    const output = container(); // where JupyterLab shows the chat
    const old = view(store, output);
    type(old.ask, "When are fees");
    const next = view(store); // the redraw renders a new view, then swaps it in
    old.root.remove();
    output.append(next.root);
    await afterEvents();
    expect(next.ask.value).toBe("When are fees");
    expect(document.activeElement).toBe(next.ask);
  });

  test("another view of the chat elsewhere on the page does not take the focus", async () => {
    const store = new ChatStore();
    const here = container();
    const elsewhere = view(store, container());
    const old = view(store, here);
    type(old.ask, "Where is the library?");
    old.root.remove(); // gone, and no new view where it stood
    feed(store, turnMessages("t1", { text: "An answer.", references: [] }));
    await afterEvents();
    expect(document.activeElement).not.toBe(elsewhere.ask);
    expect(elsewhere.ask.value).toBe(""); // a live view's box is its own; new views take drafts
  });

  test("focus the person moved elsewhere is not taken back", async () => {
    const store = new ChatStore();
    const output = container();
    const old = view(store, output);
    type(old.ask, "Draft");
    const other = document.createElement("input");
    document.body.append(other);
    other.focus();
    await afterEvents();
    other.remove(); // and from there to nowhere: the page has no focused element now
    const next = view(store);
    old.root.remove();
    output.append(next.root);
    expect(document.activeElement).toBe(document.body);
    expect(next.ask.value).toBe("Draft"); // the draft is kept all the same
  });

  test("the follow-up box gets the focus back when it shows again", async () => {
    const store = new ChatStore();
    const { root } = view(store, container());
    feed(store, turnMessages("t1", { text: "First.", references: [] }));
    const followup = root.querySelector(".citelab-followup input");
    type(followup, "And then?");
    root.querySelector(".citelab-followup").requestSubmit();
    feed(store, [{ type: "turn_start", turn_id: "t2", question: "And then?", followup: true }]);
    expect(root.querySelector(".citelab-followup").hidden).toBe(true);
    followup.blur(); // browsers take the focus from a hidden element
    await afterEvents();
    expect(document.activeElement).toBe(document.body);
    feed(store, turnMessages("t2", { text: "Then this.", references: [], followup: true }));
    expect(document.activeElement).toBe(followup);
    expect(followup.value).toBe("");
  });

  test("a refused question comes back into its box, and into its draft", async () => {
    const store = new ChatStore();
    const refusing = { ...host, ask: async () => ({ error: "Conversation not found" }) };
    const root = container();
    new ChatView(root, store, refusing, { schedule: syncSchedule });
    const input = root.querySelector(".citelab-ask input");
    type(input, "Lost?");
    root.querySelector(".citelab-ask").requestSubmit();
    expect(store.ui.drafts.ask).toBe("");
    await afterEvents();
    expect(input.value).toBe("Lost?");
    expect(store.ui.drafts.ask).toBe("Lost?");
  });
});
