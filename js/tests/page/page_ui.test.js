// The page's part of issue #13: the conversation survives a reload (sessionStorage), starter
// questions, Stop, New conversation, and the local document view through /api/document.
import { describe, expect, test } from "vitest";
import { storageKey } from "../../entries/page.js";
import { reference } from "../helpers.js";
import { DONE, json, page, pageWithRecent, settle, sseBody } from "./page_helpers.js";

class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

const answer = (text, refs, extra) =>
  new Response(
    sseBody([
      ["references", { references: refs }],
      ["token", { text }],
      ["done", DONE(text, refs, extra)],
    ]),
  );

const history = (id, turns, agent = "campus") => ({
  conversation_id: id,
  agent,
  created_at: 1000,
  updated_at: 1060,
  expires_at: 99999,
  turns,
});
const storedTurn = (turn, question, done) => ({
  turn,
  question,
  created_at: 1000 + turn,
  no_answer: false,
  withheld: false,
  answer: done.text,
  done,
});

describe("the page keeps which conversation is open", () => {
  test("a reload shows it again from the server's store; follow-ups continue it", async () => {
    const storage = new MemoryStorage();
    const refs = [reference(1)];
    const first = page([answer("Fee [1].", refs)], { storage });
    await first.mounted.ask("Fee?", false);
    await settle();
    const key = storageKey("http://127.0.0.1:8000", "campus");
    // Only the conversation's id is kept in the tab: its turns are the server's.
    expect(JSON.parse(storage.getItem(key))).toEqual({ version: 2, conversation_id: "conv-1" });
    first.mounted.destroy();
    first.root.remove();

    // The reload: a new page on the same storage asks the server for the conversation.
    const kept = history("conv-1", [storedTurn(1, "Fee?", DONE("Fee [1].", refs))]);
    const second = page([json(kept), answer("More [1].", refs, { turn: 2 })], { storage });
    await second.mounted.restored;
    expect(second.requests[0].url).toBe("http://127.0.0.1:8000/api/conversations/conv-1");
    expect(second.requests[0].method).toBe("GET");
    expect(second.requests[0].headers).toEqual({ Accept: "application/json" });
    const turns = second.root.querySelectorAll(".citelab-turn");
    expect(turns).toHaveLength(1);
    expect(turns[0].querySelector(".citelab-answer").textContent).toContain("Fee [1].");
    expect(second.root.querySelector("li.citelab-source").textContent).toContain("Source 1");
    expect(second.root.querySelector("form.citelab-ask").hidden).toBe(true);
    await second.mounted.ask("More?", true);
    await settle();
    expect(second.requests[1].body.conversation_id).toBe("conv-1");
    expect(second.root.querySelectorAll(".citelab-turn")).toHaveLength(2);
    // Turn ids never repeat (cards and markers are keyed by them).
    const ids = [...second.root.querySelectorAll(".citelab-turn")].map((t) => t.dataset.turnId);
    expect(new Set(ids).size).toBe(2);
  });

  test("a tab that kept whole turns (before) shows their conversation from the server", async () => {
    const storage = new MemoryStorage();
    const key = storageKey("http://127.0.0.1:8000", "campus");
    const old = [{ turn_id: "p1", question: "Q", status: "done", text: "A.", conversation_id: "c7" }];
    storage.setItem(key, JSON.stringify({ version: 1, next: 1, turns: old }));
    const kept = history("c7", [storedTurn(1, "Q", DONE("A.", [], { conversation_id: "c7" }))]);
    const { mounted, requests, root } = page([json(kept)], { storage });
    await mounted.restored;
    expect(requests[0].url).toBe("http://127.0.0.1:8000/api/conversations/c7");
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(1);
    expect(JSON.parse(storage.getItem(key))).toEqual({ version: 2, conversation_id: "c7" });
  });

  test("a conversation that has expired is forgotten, and the list says why", async () => {
    const storage = new MemoryStorage();
    const key = storageKey("http://127.0.0.1:8000", "campus");
    storage.setItem(key, JSON.stringify({ version: 2, conversation_id: "gone" }));
    const notFound = { error: { code: "not_found", message: "conversation 'gone' not found" } };
    const { mounted, nav } = pageWithRecent([json({ conversations: [] }), json(notFound, 404)], {
      storage,
    });
    await mounted.restored;
    expect(storage.getItem(key)).toBeNull();
    expect(nav.querySelector(".citelab-recent-status").textContent).toBe(
      "Could not show the conversation this page had open: it no longer exists " +
        "(conversations expire after a while), or it is not yours.",
    );
  });

  test("unreadable storage is ignored; refused storage loses nothing but the reload", async () => {
    const storage = new MemoryStorage();
    storage.setItem(storageKey("http://127.0.0.1:8000", "campus"), "{not json");
    const { root, requests } = page([], { storage });
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(0);
    expect(requests).toEqual([]);
    const refusing = {
      getItem: () => null,
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
      removeItem: () => {},
    };
    const other = page([answer("A.", [])], { storage: refusing });
    await other.mounted.ask("Q", false);
    await settle();
    expect(other.root.querySelector(".citelab-turn").dataset.status).toBe("done");
  });

  test("New conversation clears the view and the stored conversation", async () => {
    const storage = new MemoryStorage();
    const { root, mounted } = page([answer("A.", [])], { storage });
    await mounted.ask("Q", false);
    await settle();
    expect(storage.items.size).toBe(1);
    root.querySelector("button.citelab-new").click();
    await settle();
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(0);
    expect(storage.items.size).toBe(0);
  });
});

describe("page controls", () => {
  test("starter questions ask as a new question and leave once one is asked", async () => {
    const { root, requests } = page([answer("A.", [])], {
      starters: ["How much is the fee?", "Who may apply?"],
    });
    const chips = root.querySelectorAll(".citelab-starters .citelab-chip");
    expect([...chips].map((chip) => chip.textContent)).toEqual([
      "How much is the fee?",
      "Who may apply?",
    ]);
    chips[0].click();
    await settle();
    expect(requests[0].body).toEqual({ agent: "campus", question: "How much is the fee?" });
    expect(root.querySelector(".citelab-starters").hidden).toBe(true);
  });

  test("Stop aborts the stream and marks the turn stopped", async () => {
    let aborted = false;
    const hanging = (signal) =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('event: token\ndata: {"text":"Half"}\n\n'));
            signal.addEventListener("abort", () => {
              aborted = true;
              controller.error(new DOMException("aborted", "AbortError"));
            });
          },
        }),
      );
    // A fetch whose body streams until its request is aborted.
    const { root: root2, mounted: mounted2 } = page([], {
      fetch: async (_url, init) => hanging(init.signal),
    });
    await mounted2.ask("Q", false);
    await settle();
    expect(root2.querySelector("button.citelab-stop").hidden).toBe(false);
    root2.querySelector("button.citelab-stop").click();
    await settle();
    expect(aborted).toBe(true);
    const turn = root2.querySelector(".citelab-turn");
    expect(turn.dataset.status).toBe("error");
    // Stopping is what the person asked for: no error, and no alert.
    expect(turn.querySelector(".citelab-error").hidden).toBe(true);
    expect(turn.querySelector(".citelab-stopped").textContent).toContain(
      "Stopped: the answer above is incomplete.",
    );
    expect(turn.querySelector(".citelab-answer").textContent).toContain("Half");
  });

  test("Read posts to /api/document for the conversation's agent", async () => {
    const ref = reference(1, { uri: "entity:node/7", passage: "Seven." });
    const documentResponse = new Response(
      JSON.stringify({ uri: "entity:node/7", title: "Seven", content: "Six. Seven. Eight." }),
      { headers: { "Content-Type": "application/json" } },
    );
    const { root, mounted, requests } = page([answer("S [1].", [ref]), documentResponse]);
    await mounted.ask("Q", false);
    await settle();
    root.querySelector("button.citelab-source-read").click();
    await settle();
    expect(requests[1].url).toBe("http://127.0.0.1:8000/api/document");
    expect(requests[1].headers["X-CSRF-Token"]).toBe("tok");
    expect(requests[1].body).toEqual({ agent: "campus", uri: "entity:node/7" });
    expect(root.querySelector(".citelab-document-passage").textContent).toBe("Seven.");
  });
});
