// #24: the page lists the reader's recent conversations with its agent (the server's store,
// GET /api/conversations) and shows one again in the chat, in place or in a new tab, with its
// sources and their numbers; a follow-up continues it.
import { afterEach, describe, expect, test } from "vitest";
import { mountAll } from "../../entries/page.js";
import { ago, ANONYMOUS_TEXT, EMPTY_TEXT } from "../../views/recent_conversations.js";
import { WITHHELD_TEXT } from "../../views/turn_view.js";
import { reference, syncSchedule } from "../helpers.js";
import { DONE, fakeFetch, json, pageWithRecent, settle, sseBody } from "./page_helpers.js";

const NOW = 1_000_000;
const summary = (id, question, turns, minutesAgo) => ({
  conversation_id: id,
  agent: "campus",
  first_question: question,
  turns,
  created_at: NOW - 3600,
  updated_at: NOW - minutesAgo * 60,
  expires_at: NOW + 86400,
});
const listed = (...items) => json({ conversations: items });
const FEE = reference(1, { title: "Semester fee", uri: "entity:page/fee", entity_id: "fee" });
const TICKET = reference(2, { title: "Ticket", uri: "entity:page/ticket", entity_id: "ticket" });
const historyOf = (id, turns, agent = "campus") => ({
  conversation_id: id,
  agent,
  created_at: NOW - 3600,
  updated_at: NOW - 60,
  expires_at: NOW + 86400,
  turns,
});
const FEES = historyOf("c1", [
  {
    turn: 1,
    question: "How much is the fee?",
    created_at: NOW - 3600,
    no_answer: false,
    withheld: false,
    answer: "It is 312 euros [1].",
    done: DONE("It is 312 euros [1].", [FEE], { conversation_id: "c1", turn: 1, log_id: "l1" }),
  },
  {
    turn: 2,
    question: "What does it include?",
    created_at: NOW - 60,
    no_answer: false,
    withheld: false,
    answer: "A ticket [2], for 312 euros [1].",
    done: DONE("A ticket [2], for 312 euros [1].", [TICKET, FEE], {
      conversation_id: "c1",
      turn: 2,
      suggested_replies: [{ label: "Where is the office?" }],
    }),
  },
]);

function recentPage(responses, options = {}) {
  return pageWithRecent(responses, { now: () => NOW, ...options });
}

const items = (nav) =>
  [...nav.querySelectorAll("li.citelab-recent-item a")].map((link) => ({
    question: link.querySelector(".citelab-recent-question").textContent,
    meta: link.querySelector(".citelab-recent-meta").textContent,
    href: link.getAttribute("href"),
    current: link.getAttribute("aria-current"),
  }));

const MARKERS = (root) =>
  [...root.querySelectorAll(".citelab-answer a[data-ref-index]")].map((link) => {
    const card = document.getElementById(link.getAttribute("href").slice(1));
    return [link.dataset.refIndex, card.querySelector(".citelab-source-number").textContent];
  });

afterEach(() => {
  document.body.replaceChildren();
});

describe("the recent conversations list", () => {
  test("lists the reader's conversations with the agent, newest first, as links", async () => {
    const { nav, requests, mounted } = recentPage([
      listed(summary("c2", "Who may apply?", 1, 5), summary("c1", "How much is the fee?", 2, 120)),
    ]);
    await mounted.refreshed();
    expect(requests[0].url).toBe("http://127.0.0.1:8000/api/conversations?agent=campus&limit=20");
    expect(requests[0].method).toBe("GET");
    expect(requests[0].headers).toEqual({ Accept: "application/json" }); // a read: no CSRF
    expect(requests[0].credentials).toBe("same-origin");
    expect(nav.querySelector("h2").textContent).toBe("Recent conversations");
    expect(nav.getAttribute("aria-labelledby")).toBe(nav.querySelector("h2").id);
    expect(items(nav)).toEqual([
      {
        question: "Who may apply?",
        meta: "1 question · 5 minutes ago",
        href: "/?agent=campus&conversation=c2",
        current: null,
      },
      {
        question: "How much is the fee?",
        meta: "2 questions · 2 hours ago",
        href: "/?agent=campus&conversation=c1",
        current: null,
      },
    ]);
    const time = nav.querySelector("time");
    expect(time.getAttribute("datetime")).toBe(new Date((NOW - 300) * 1000).toISOString());
  });

  test("says when there is none, when the page is anonymous, and when loading failed", async () => {
    const empty = recentPage([listed()]);
    await empty.mounted.refreshed();
    expect(empty.nav.querySelector(".citelab-recent-note").textContent).toBe(EMPTY_TEXT);
    expect(empty.nav.querySelectorAll("li")).toHaveLength(0);

    const anonymous = recentPage([], { signedIn: false });
    expect(anonymous.requests).toEqual([]); // anonymous conversations are listed for nobody
    expect(anonymous.nav.querySelector(".citelab-recent-note").textContent).toBe(ANONYMOUS_TEXT);

    const failing = recentPage([
      json({ error: { code: "internal_error", message: "The server failed." } }, 500),
      listed(summary("c1", "Fee?", 1, 1)),
    ]);
    await failing.mounted.refreshed();
    const error = failing.nav.querySelector(".citelab-recent-error");
    expect(error.hidden).toBe(false);
    expect(error.textContent).toBe("Could not load your conversations: The server failed.");
    const retry = failing.nav.querySelector("button.citelab-recent-retry");
    expect(retry.hidden).toBe(false);
    retry.click();
    await failing.mounted.refreshed();
    expect(error.hidden).toBe(true);
    expect(retry.hidden).toBe(true);
    expect(items(failing.nav).map((item) => item.question)).toEqual(["Fee?"]);

    const unreachable = recentPage([() => Promise.reject(new TypeError("Failed to fetch"))]);
    await unreachable.mounted.refreshed();
    expect(unreachable.nav.querySelector(".citelab-recent-error").textContent).toBe(
      "Could not load your conversations: The server could not be reached.",
    );
  });

  test("a plain click shows the conversation with its sources and numbers; a follow-up continues it", async () => {
    const { nav, root, requests, mounted } = recentPage([
      listed(summary("c1", "How much is the fee?", 2, 1)),
      json(FEES),
      new Response(sseBody([["done", DONE("Room 3 [3].", [], { conversation_id: "c1", turn: 3 })]])),
      listed(summary("c1", "How much is the fee?", 3, 0)),
    ]);
    await mounted.refreshed();
    const link = nav.querySelector("a.citelab-recent-link");
    const clicked = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
    link.dispatchEvent(clicked);
    expect(clicked.defaultPrevented).toBe(true);
    expect(nav.querySelector(".citelab-recent-status").textContent).toBe("Opening the conversation…");
    await settle();
    expect(requests[1].url).toBe("http://127.0.0.1:8000/api/conversations/c1");
    const turns = [...root.querySelectorAll(".citelab-turn")];
    expect(turns.map((turn) => turn.querySelector(".citelab-question").textContent)).toEqual([
      "How much is the fee?",
      "What does it include?",
    ]);
    expect(turns.every((turn) => turn.dataset.status === "done")).toBe(true);
    // Each marker points at the card of its source, which shows the number the text uses.
    expect(MARKERS(root)).toEqual([
      ["1", "[1]"],
      ["2", "[2]"],
      ["1", "[1]"],
    ]);
    expect(root.querySelectorAll("li.citelab-source")).toHaveLength(2);
    expect(root.querySelector(".citelab-chips .citelab-chip").textContent).toBe("Where is the office?");
    expect(link.getAttribute("aria-current")).toBe("true");
    expect(nav.querySelector(".citelab-recent-status").textContent).toBe(
      "The conversation is shown: ask a follow-up to continue it.",
    );
    await mounted.ask("Where is the office?", true);
    await settle();
    expect(requests[2].body).toEqual({
      agent: "campus",
      question: "Where is the office?",
      conversation_id: "c1",
    });
    expect(requests[3].url).toContain("/api/conversations?agent=campus"); // the list again
    expect(items(nav)[0].meta).toBe("3 questions · just now");
  });

  test("a click meant for a new tab is left to the browser", async () => {
    const { nav, requests, mounted } = recentPage([listed(summary("c1", "Fee?", 1, 1))]);
    await mounted.refreshed();
    const link = nav.querySelector("a.citelab-recent-link");
    for (const init of [{ ctrlKey: true }, { metaKey: true }, { shiftKey: true }, { button: 1 }]) {
      const event = new MouseEvent("click", { bubbles: true, cancelable: true, ...init });
      link.dispatchEvent(event);
      expect(event.defaultPrevented).toBe(false);
    }
    await settle();
    expect(requests).toHaveLength(1);
  });

  test("a new conversation shows at the top after its first answer, marked as shown", async () => {
    const { nav, mounted } = recentPage([
      listed(summary("c1", "Fee?", 1, 30)),
      new Response(sseBody([["done", DONE("A.", [], { conversation_id: "c2" })]])),
      listed(summary("c2", "New one?", 1, 0), summary("c1", "Fee?", 1, 30)),
    ]);
    await mounted.refreshed();
    await mounted.ask("New one?", false);
    await settle();
    expect(items(nav).map(({ question, current }) => [question, current])).toEqual([
      ["New one?", "true"],
      ["Fee?", null],
    ]);
  });

  test("opening errors are said plainly; the conversation shown stays", async () => {
    const notYours = { error: { code: "not_found", message: "conversation 'c1' not found" } };
    const { nav, root, mounted } = recentPage([
      listed(summary("c1", "Fee?", 1, 1), summary("c2", "Apply?", 1, 2)),
      new Response(sseBody([["done", DONE("Shown.", [], { conversation_id: "c9" })]])),
      listed(summary("c9", "Shown?", 1, 0)),
      json(notYours, 404),
      () => Promise.reject(new TypeError("Failed to fetch")),
      new Response("<html>", { status: 200 }),
    ]);
    await mounted.refreshed();
    await mounted.ask("Shown?", false);
    await settle();
    const status = nav.querySelector(".citelab-recent-status");
    const said = [];
    for (let i = 0; i < 3; i++) {
      await settle();
      nav.querySelector("a.citelab-recent-link").click();
      await settle();
      said.push(status.textContent);
    }
    expect(said).toEqual([
      "Could not show the conversation: it no longer exists (conversations expire after a " +
        "while), or it is not yours.",
      "Could not show the conversation: The server could not be reached.",
      "Could not show the conversation: The server sent an unreadable conversation.",
    ]);
    expect(root.querySelector(".citelab-answer").textContent).toContain("Shown.");
  });

  test("a question asked while a conversation is still arriving wins", async () => {
    let arrive;
    const late = new Promise((resolve) => {
      arrive = resolve;
    });
    const { nav, root, mounted } = recentPage([
      listed(summary("c1", "Fee?", 2, 1)),
      () => late,
      new Response(sseBody([["done", DONE("Mine.", [], { conversation_id: "c5" })]])),
      listed(),
    ]);
    await mounted.refreshed();
    nav.querySelector("a.citelab-recent-link").click();
    await mounted.ask("My own question?", false);
    await settle();
    arrive(json(FEES));
    await settle();
    const questions = [...root.querySelectorAll(".citelab-question")].map((q) => q.textContent);
    expect(questions).toEqual(["My own question?"]);
  });

  test("a withheld turn shows its question and says why its answer is not shown", async () => {
    const withheld = historyOf("c3", [
      {
        turn: 1,
        question: "Salary bands?",
        created_at: NOW,
        no_answer: false,
        withheld: true,
        answer: null,
        done: null,
      },
      { turn: 2, question: "Old turn?", created_at: NOW, answer: "Kept text [1].", done: null },
    ]);
    const { nav, root, requests, mounted } = recentPage([
      listed(summary("c3", "Salary bands?", 2, 1)),
      json(withheld),
      new Response(sseBody([["done", DONE("B.", [], { conversation_id: "c3", turn: 3 })]])),
      listed(),
    ]);
    await mounted.refreshed();
    nav.querySelector("a.citelab-recent-link").click();
    await settle();
    const [first, second] = root.querySelectorAll(".citelab-turn");
    expect(first.querySelector(".citelab-question").textContent).toBe("Salary bands?");
    expect(first.querySelector(".citelab-answer").textContent).toBe("");
    expect(first.querySelector(".citelab-withheld").hidden).toBe(false);
    expect(first.querySelector(".citelab-withheld").textContent).toBe(WITHHELD_TEXT);
    expect(first.querySelector(".citelab-turn-actions").hidden).toBe(true);
    expect(first.querySelector(".citelab-error").hidden).toBe(true);
    // A turn saved before done events were kept: its text, without sources.
    expect(second.querySelector(".citelab-answer").textContent).toContain("Kept text [1].");
    expect(second.querySelector(".citelab-withheld").hidden).toBe(true);
    await mounted.ask("Go on?", true);
    await settle();
    expect(requests[2].body.conversation_id).toBe("c3");
  });

  test("a conversation of the page's address opens; the address forgets it", async () => {
    window.history.replaceState(null, "", "/?agent=campus&conversation=c1");
    const root = document.createElement("div");
    root.id = "citelab-chat";
    root.dataset.citelabPage = "";
    root.dataset.agent = "campus";
    root.dataset.signedIn = "true";
    const nav = document.createElement("nav");
    nav.dataset.citelabConversationsFor = "citelab-chat";
    document.body.append(root, nav);
    const { fetch, requests } = fakeFetch([listed(summary("c1", "Fee?", 2, 1)), json(FEES)]);
    const [mounted] = mountAll(document, { fetch, storage: null, schedule: syncSchedule });
    await mounted.restored;
    expect(requests.map((request) => request.url)).toEqual([
      "/api/conversations?agent=campus&limit=20",
      "/api/conversations/c1",
    ]);
    expect(window.location.search).toBe("?agent=campus");
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(2);
    await mounted.refreshed();
    expect(nav.querySelector("a").getAttribute("aria-current")).toBe("true");
    window.history.replaceState(null, "", "/");
  });

  test("questions and answers from the server are text, never markup", async () => {
    const hostile = '<img src=x onerror="alert(1)">';
    const { nav, mounted } = recentPage([listed(summary(hostile, hostile, 1, 1))]);
    await mounted.refreshed();
    expect(nav.querySelector("img")).toBeNull();
    expect(nav.querySelector(".citelab-recent-question").textContent).toBe(hostile);
    const query = new URLSearchParams({ agent: "campus", conversation: hostile });
    expect(nav.querySelector("a").getAttribute("href")).toBe(`/?${query}`);
  });
});

describe("how long ago", () => {
  test("in words, from just now to years", () => {
    expect(ago(NOW - 10, NOW)).toBe("just now");
    expect(ago(NOW - 60, NOW)).toBe("1 minute ago");
    expect(ago(NOW - 3 * 3600, NOW)).toBe("3 hours ago");
    expect(ago(NOW - 86400, NOW)).toBe("yesterday");
    expect(ago(NOW - 400 * 86400, NOW)).toBe("last year");
  });
});
