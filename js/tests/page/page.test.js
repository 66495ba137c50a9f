import { describe, expect, test } from "vitest";
import { mountAll, mountPage } from "../../entries/page.js";
import { reference, syncSchedule } from "../helpers.js";
import { DONE, fakeFetch, page, settle, sseBody } from "./page_helpers.js";

describe("the standalone page", () => {
  test("asks over SSE with the CSRF header and renders the streamed answer", async () => {
    const refs = [reference(1)];
    const { root, requests, mounted } = page([
      new Response(
        sseBody([
          ["references", { references: refs }],
          ["token", { text: "Open until " }],
          ["token", { text: "23:00 [1]." }],
          ["done", DONE("Open until 23:00 [1].", refs)],
        ]),
        {
          headers: { "Content-Type": "text/event-stream" },
        },
      ),
    ]);
    await mounted.ask("When does it close?", false);
    await settle();
    expect(requests[0].url).toBe("http://127.0.0.1:8000/api/question");
    expect(requests[0].method).toBe("POST");
    expect(requests[0].headers).toMatchObject({
      Accept: "text/event-stream",
      "X-CSRF-Token": "tok",
      "Content-Type": "application/json",
    });
    expect(requests[0].body).toEqual({ agent: "campus", question: "When does it close?" });
    expect(root.querySelector(".citelab-answer").textContent).toContain("Open until 23:00 [1].");
    expect(root.querySelector("li.citelab-source").textContent).toContain("Source 1");
    expect(root.querySelector(".citelab-chip").textContent).toBe("More");
  });

  test("a follow-up sends the conversation id; feedback posts to /api/feedback", async () => {
    const { root, requests, mounted } = page(
      [
        new Response(sseBody([["done", DONE("One.", [])]])),
        new Response(sseBody([["done", DONE("Two.", [], { turn: 2 })]])),
        new Response(JSON.stringify({ ok: true }), { status: 200 }),
      ],
      { feedbackEnabled: true },
    );
    await mounted.ask("First?", false);
    await settle();
    root.querySelector(".citelab-chip").click();
    await settle();
    expect(requests[1].body).toEqual({
      agent: "campus",
      question: "More",
      conversation_id: "conv-1",
    });
    root.querySelectorAll(".citelab-thumb")[2].click(); // second turn, thumbs up
    await settle();
    expect(requests[2].url).toBe("http://127.0.0.1:8000/api/feedback");
    expect(requests[2].body).toEqual({ conversation_id: "conv-1", turn: 2, value: "up" });
    expect(requests[2].headers["X-CSRF-Token"]).toBe("tok");
    expect(root.querySelectorAll(".citelab-feedback-status")[1].textContent).toBe(
      "Thanks for your feedback.",
    );
  });

  test("HTTP errors, broken streams and unreachable servers show as the turn's error", async () => {
    const { root, mounted } = page([
      new Response(
        JSON.stringify({
          error: { code: "conflict", message: "The agent is not enabled for answers." },
        }),
        { status: 409 },
      ),
      new Response(sseBody([["token", { text: "Half" }]])),
      () => Promise.reject(new TypeError("Failed to fetch")),
      new Response("<html>oops</html>", { status: 500 }),
    ]);
    const errors = [];
    for (const question of ["a", "b", "c", "d"]) {
      await mounted.ask(question, false);
      await settle();
      errors.push(root.querySelector(".citelab-error").textContent);
    }
    expect(errors).toEqual([
      "Error: The agent is not enabled for answers.",
      "Error: The answer stopped before it was complete.",
      "Error: The server could not be reached.",
      "Error: The server answered 500.",
    ]);
    expect(root.querySelectorAll(".citelab-turn")).toHaveLength(1); // each was a new question
  });

  test("Sources panels on the page are filled from the same turns", async () => {
    const root = document.createElement("div");
    root.id = "main-chat";
    const panel = document.createElement("aside");
    panel.dataset.citelabSourcesFor = "main-chat";
    document.body.append(root, panel);
    const refs = [reference(1), reference(2)];
    const { fetch } = fakeFetch([
      new Response(
        sseBody([
          ["references", { references: refs }],
          ["done", DONE("A [1] B [2].", refs)],
        ]),
      ),
    ]);
    const mounted = mountPage(root, { fetch, schedule: syncSchedule, storage: null });
    await mounted.ask("Q", false);
    await settle();
    expect(panel.querySelectorAll("li.citelab-source")).toHaveLength(2);
    expect(root.querySelectorAll("li.citelab-source")).toHaveLength(2);
  });

  test("mounts itself from data- attributes (no inline script needed)", () => {
    const root = document.createElement("div");
    root.dataset.citelabPage = "";
    root.dataset.agent = "campus";
    root.dataset.placeholder = "Ask the campus";
    document.body.append(root);
    const [mounted] = mountAll(document);
    expect(mounted).toBeDefined();
    expect(root.querySelector(".citelab-ask input").placeholder).toBe("Ask the campus");
    expect(mountAll(document)).toEqual([]); // not twice
  });
});

describe("a session that has ended", () => {
  test("the header stops saying who is signed in, and the turn says why", async () => {
    const header = document.createElement("header");
    header.className = "citelab-page-header";
    header.innerHTML = "<h1>citelab</h1><p>Agent <strong>campus</strong> · signed in as <strong>alice</strong></p>";
    document.body.append(header);
    const gone = {
      code: "session_expired",
      message: "your session has ended (it expired, or the server restarted)",
    };
    const { mounted } = page([
      new Response(JSON.stringify({ error: gone }), {
        status: 401,
        headers: { "Content-Type": "application/json" },
      }),
    ]);
    mounted.ask("Still there?");
    await settle();
    expect(header.textContent).not.toContain("signed in as");
    expect(header.textContent).toContain("Signed out: your session has ended");
    expect(document.body.dataset.citelabSignedOut).toBe("true");
    const [turn] = mounted.store.turns();
    expect(turn.status).toBe("error");
    header.remove();
    delete document.body.dataset.citelabSignedOut;
  });
});
