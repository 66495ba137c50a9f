import { describe, expect, test } from "vitest";
import { ChatStore } from "../../state/store.js";
import { reference, turnMessages } from "../helpers.js";

function feed(store, messages) {
  for (const message of messages) store.receive(message);
}

describe("chat store", () => {
  test("a done turn keeps what only the kernel's trait holds (rounds, feedback)", () => {
    const store = new ChatStore();
    const rounds = { system_prompt: "P", forced: [], rounds: [] };
    feed(store, turnMessages("t1", { text: "A [1].", references: [reference(1)] }));
    expect(store.turns()[0].rounds ?? null).toBe(null);
    store.setSnapshot([
      { turn_id: "t1", status: "done", text: "A [1].", rounds, feedback: { value: "up" } },
    ]);
    expect(store.turns()[0]).toMatchObject({ rounds, feedback: { value: "up" }, text: "A [1]." });
    const sent = new ChatStore();
    feed(sent, turnMessages("t2", { text: "B", references: [], done: { rounds } }));
    expect(sent.turns()[0].rounds).toEqual(rounds);
  });

  test("a turn streams: pending → streaming → done, tokens appended in order", () => {
    const store = new ChatStore();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Why?", followup: false });
    expect(store.turns()[0]).toMatchObject({ status: "pending", text: "", references: null });
    store.receive({ type: "references", turn_id: "t1", references: [reference(1)] });
    store.receive({ type: "token", turn_id: "t1", text: "Because " });
    store.receive({ type: "token", turn_id: "t1", text: "[1]." });
    expect(store.turns()[0]).toMatchObject({ status: "streaming", text: "Because [1]." });
    store.receive({
      type: "done",
      turn_id: "t1",
      text: "Because [1].",
      references: [reference(1, { title: "Final" })],
      suggested_replies: [{ label: "More" }],
      conversation_id: "c1",
      turn: 1,
      log_id: "log-1",
      trace_id: "trace-1",
      message: {},
      no_answer: false,
    });
    expect(store.turns()[0]).toMatchObject({
      status: "done",
      conversation_id: "c1",
      log_id: "log-1",
      trace_id: "trace-1",
      references: [{ title: "Final" }],
      suggested_replies: [{ label: "More" }],
    });
  });

  test("a streaming turn's pieces are one shared list; each turn object counts its own", () => {
    const store = new ChatStore();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Q", followup: false });
    store.receive({ type: "token", turn_id: "t1", text: "Fees " });
    const early = store.turns()[0];
    store.receive({ type: "token", turn_id: "t1", text: "are due." });
    const later = store.turns()[0];
    expect(later.pieces).toBe(early.pieces);
    expect([early.pieceCount, later.pieceCount]).toEqual([1, 2]);
    expect(later.pieces.slice(0, later.pieceCount).join("")).toBe(later.text);
    store.receive({ type: "done", turn_id: "t1", text: "Fees are due [1].", references: [] });
    expect(store.turns()[0]).toMatchObject({ pieces: null, pieceCount: 0 });
    // A snapshot never brings pieces of its own, whatever the kernel sends.
    store.setSnapshot([{ turn_id: "t9", status: "streaming", text: "x", pieces: ["y"] }]);
    expect(store.snapshot[0]).toMatchObject({ pieces: null, pieceCount: 0 });
  });

  test("tokens after done, unknown types and malformed messages are ignored", () => {
    const store = new ChatStore();
    feed(store, turnMessages("t1", { text: "Final.", references: [] }));
    store.receive({ type: "token", turn_id: "t1", text: " late" });
    store.receive({ type: "mystery", turn_id: "t1" });
    store.receive({ type: "token", text: "no turn id" });
    store.receive(null);
    store.receive("text");
    expect(store.turns()).toHaveLength(1);
    expect(store.turns()[0].text).toBe("Final.");
  });

  test("follow-ups append; a new question clears everything", () => {
    const store = new ChatStore();
    feed(store, turnMessages("t1", { text: "One.", references: [] }));
    feed(store, turnMessages("t2", { text: "Two.", references: [], followup: true }));
    expect(store.turns().map((t) => t.turn_id)).toEqual(["t1", "t2"]);
    store.receive({ type: "turn_start", turn_id: "t3", question: "New", followup: false });
    expect(store.turns().map((t) => t.turn_id)).toEqual(["t3"]);
  });

  test("an error keeps the conversation usable", () => {
    const store = new ChatStore();
    feed(store, turnMessages("t1", { text: "One.", references: [] }));
    store.receive({ type: "turn_start", turn_id: "t2", question: "Again", followup: true });
    store.receive({ type: "error", turn_id: "t2", code: "conflict", message: "Agent disabled" });
    expect(store.turns().map((t) => t.status)).toEqual(["done", "error"]);
    expect(store.turns()[1].error).toEqual({ code: "conflict", message: "Agent disabled" });
  });

  test("a new question cancels the streaming one, whose late events change nothing", () => {
    const store = new ChatStore();
    store.receive({ type: "turn_start", turn_id: "t1", question: "Slow?", followup: false });
    store.receive({ type: "token", turn_id: "t1", text: "Half an ans" });
    // The kernel's order: the cancelled turn's error, then the new question's turn_start.
    const cancelled = { code: "cancelled", message: "The question was cancelled." };
    store.receive({ type: "error", turn_id: "t1", ...cancelled });
    expect(store.turns()[0]).toMatchObject({ status: "error", error: cancelled });
    store.receive({ type: "turn_start", turn_id: "t2", question: "Fast?", followup: false });
    store.receive({ type: "token", turn_id: "t1", text: "swer" }); // flushed late: ignored
    expect(store.turns().map((t) => [t.turn_id, t.status])).toEqual([["t2", "pending"]]);
    // The trait's record of the cancelled turn (synced before the new one) is not shown.
    store.setSnapshot([{ turn_id: "t1", status: "error", error: cancelled, text: "Half an ans" }]);
    expect(store.turns().map((t) => t.turn_id)).toEqual(["t2"]);
  });

  test("the trait snapshot shows turns from before a reload; live state wins for its turns", () => {
    const store = new ChatStore();
    const saved = {
      turn_id: "t1",
      question: "Old",
      followup: false,
      status: "done",
      text: "Saved.",
      references: [reference(1)],
    };
    store.setSnapshot([
      saved,
      { turn_id: "t2", question: "Now", followup: true, status: "pending", text: "" },
    ]);
    store.receive({ type: "token", turn_id: "t2", text: "Streaming" });
    expect(store.turns().map((t) => [t.turn_id, t.status, t.text])).toEqual([
      ["t1", "done", "Saved."],
      ["t2", "streaming", "Streaming"],
    ]);
    // The kernel's final snapshot arrives after the live done: nothing changes.
    feed(store, [
      { type: "done", turn_id: "t2", text: "Streaming done", references: [], conversation_id: "c" },
    ]);
    store.setSnapshot([
      saved,
      { turn_id: "t2", status: "done", text: "Streaming done", references: [] },
    ]);
    expect(store.turns()[1].text).toBe("Streaming done");
  });

  test("a snapshot that predates a live new question is not shown", () => {
    const store = new ChatStore();
    store.setSnapshot([{ turn_id: "t1", status: "done", text: "Old conversation" }]);
    store.receive({ type: "turn_start", turn_id: "t2", question: "New", followup: false });
    expect(store.turns().map((t) => t.turn_id)).toEqual(["t2"]);
    store.setSnapshot([{ turn_id: "t2", status: "pending", question: "New", text: "" }]);
    expect(store.turns().map((t) => t.turn_id)).toEqual(["t2"]);
  });

  test("an equal references list in a new snapshot keeps its identity", () => {
    const store = new ChatStore();
    store.setSnapshot([{ turn_id: "t1", status: "done", references: [reference(1)] }]);
    const before = store.turns()[0].references;
    store.setSnapshot([{ turn_id: "t1", status: "done", references: [reference(1)] }]);
    expect(store.turns()[0].references).toBe(before);
  });

  test("requests resolve with the kernel's ack, or an error after a timeout", async () => {
    const store = new ChatStore();
    const sent = [];
    const { request_id, ack } = store.request(
      { type: "ask", question: "Q", followup: false },
      (m) => sent.push(m),
    );
    expect(sent).toEqual([{ type: "ask", question: "Q", followup: false, request_id }]);
    store.receive({ type: "ack", request_id, error: "Question is empty" });
    await expect(ack).resolves.toEqual({ error: "Question is empty" });
    const late = store.request({ type: "ask" }, () => {}, { timeout: 5 });
    await expect(late.ack).resolves.toEqual({ error: "The kernel did not answer." });
  });

  test("subscribers are told about every change", () => {
    const store = new ChatStore();
    let calls = 0;
    const unsubscribe = store.subscribe(() => calls++);
    feed(store, turnMessages("t1", { text: "abcd", references: [], pieces: 4 }));
    expect(calls).toBe(7);
    unsubscribe();
    store.receive({ type: "turn_start", turn_id: "t2", followup: true });
    expect(calls).toBe(7);
  });
});
