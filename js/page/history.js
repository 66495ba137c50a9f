// A conversation from the server's store, shown again (GET {apiBase}/api/conversations/{id}):
// each turn becomes what its `done` event made of it live (the server keeps the event its
// client got), so it draws as it did, with its sources and their numbers. A turn that drew on
// a document the reader may no longer read comes back withheld: its question only.
import { doneTurn, newTurn } from "../state/store.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").History} History */
/** @typedef {import("../contract/model.js").ConversationSummary} ConversationSummary */

/**
 * Whether a parsed response body is a conversation's history.
 * @param {unknown} value
 * @returns {value is History}
 */
export function isHistory(value) {
  if (!value || typeof value !== "object") return false;
  const { conversation_id: id, agent, turns } = /** @type {Record<string, unknown>} */ (value);
  return typeof id === "string" && typeof agent === "string" && Array.isArray(turns);
}

/**
 * The turns of `history` as the chat draws them, oldest first; `nextId` gives each its
 * client-side turn id.
 * @param {History} history
 * @param {() => string} nextId
 * @returns {Turn[]}
 */
export function historyTurns(history, nextId) {
  const conversation_id = history.conversation_id;
  return history.turns
    .filter((entry) => entry && typeof entry.question === "string")
    .map((entry, index) => {
      const question = entry.question;
      const turn = newTurn({ turn_id: nextId(), question, followup: index > 0 });
      const number = Number.isInteger(entry.turn) ? entry.turn : null;
      if (entry.withheld) {
        const withheld = { withheld: true, no_answer: true, conversation_id, turn: number };
        return { ...turn, status: "done", ...withheld };
      }
      const done = entry.done;
      if (done && typeof done === "object") {
        const id = done.conversation_id ?? conversation_id;
        return doneTurn(turn, { ...done, conversation_id: id });
      }
      // Saved before the server kept done events: the answer's text, without its sources.
      return doneTurn(turn, {
        text: typeof entry.answer === "string" ? entry.answer : "",
        conversation_id,
        turn: number,
        no_answer: Boolean(entry.no_answer),
      });
    });
}

/**
 * The summaries of a parsed `GET /api/conversations` body that are well formed.
 * @param {unknown} body
 * @returns {ConversationSummary[]}
 */
export function summariesOf(body) {
  const list =
    body && typeof body === "object"
      ? /** @type {{conversations?: unknown}} */ (body).conversations
      : null;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (item) =>
      item &&
      typeof item === "object" &&
      typeof item.conversation_id === "string" &&
      typeof item.first_question === "string",
  );
}
