// The "Prompt and rounds" expander of a done turn (kernel side: Chat's `rounds` turn field):
// the system prompt the model last saw, the search the service forced, then per model round
// the tool calls with their arguments, the tool messages as rewritten (what the model read
// next), and the raw text the model wrote before citations were finalized. Closed at first;
// everything is shown as text (prompts quote untrusted sources and model output).
import { listOf } from "../contract/model.js";
import { element, show } from "../dom/nodes.js";

/** @typedef {import("../contract/model.js").Rounds} Rounds */
/** @typedef {import("../contract/model.js").ToolCall} ToolCall */

export class RoundsView {
  /**
   * @param {Document} doc
   */
  constructor(doc) {
    this.doc = doc;
    this.element = element(doc, "details", "citelab-rounds");
    this.element.hidden = true;
    /** @type {Rounds|null|undefined} */
    this.shown = undefined;
  }

  /**
   * `rounds`: `{system_prompt, forced, rounds: [...]}` or null (nothing to show).
   * @param {Rounds|null|undefined} rounds
   */
  update(rounds) {
    if (this.shown === rounds) return;
    this.shown = rounds;
    const valid = rounds && typeof rounds === "object" && Array.isArray(rounds.rounds);
    show(this.element, Boolean(valid));
    if (!valid) {
      this.element.replaceChildren();
      return;
    }
    const { doc } = this;
    const count = rounds.rounds.length;
    const summary = element(
      doc,
      "summary",
      "citelab-rounds-summary",
      `Prompt and rounds (${count} round${count === 1 ? "" : "s"})`,
    );
    const parts = [summary];
    if (typeof rounds.system_prompt === "string" && rounds.system_prompt) {
      parts.push(section(doc, "System prompt", rounds.system_prompt));
    }
    for (const call of listOf(rounds.forced)) {
      parts.push(callView(doc, call, "Search forced before the model"));
    }
    for (const round of rounds.rounds) {
      const box = element(doc, "section", "citelab-round");
      const reason = typeof round?.finish_reason === "string" ? `, ${round.finish_reason}` : "";
      box.append(element(doc, "h4", "citelab-round-heading", `Round ${round?.index ?? "?"}${reason}`));
      for (const call of listOf(round?.tool_calls)) box.append(callView(doc, call, "Tool call"));
      if (typeof round?.text === "string" && round.text) {
        box.append(section(doc, "Raw model text", round.text));
      }
      parts.push(box);
    }
    this.element.replaceChildren(...parts);
  }
}

/**
 * @param {Document} doc
 * @param {ToolCall} call
 * @param {string} label
 */
function callView(doc, call, label) {
  const box = element(doc, "div", "citelab-round-call");
  const name = typeof call?.name === "string" ? call.name : "?";
  box.append(element(doc, "p", "citelab-round-label", `${label}: ${name}`));
  if (typeof call?.arguments === "string") box.append(pre(doc, call.arguments));
  if (typeof call?.error === "string" && call.error) {
    box.append(element(doc, "p", "citelab-round-error", `Error: ${call.error}`));
  }
  if (typeof call?.message === "string" && call.message) {
    box.append(section(doc, "Tool message as rewritten", call.message));
  }
  return box;
}

/**
 * @param {Document} doc
 * @param {string} label
 * @param {string} text
 */
function section(doc, label, text) {
  const box = element(doc, "div", "citelab-round-part");
  box.append(element(doc, "p", "citelab-round-label", label), pre(doc, text));
  return box;
}

/**
 * @param {Document} doc
 * @param {string} text
 */
function pre(doc, text) {
  const node = element(doc, "pre", "citelab-round-text");
  node.textContent = text;
  return node;
}
