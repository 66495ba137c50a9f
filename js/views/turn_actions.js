// Copy a done turn's answer: as Markdown or as JSON (the AnswerMessage).
import { iconButton } from "../dom/icons.js";
import { element, show } from "../dom/nodes.js";

const COPIED_MS = 2000;

// Copy the answer as Markdown (its text, markers as written) or as JSON (the AnswerMessage:
// MCP content blocks with `_meta`), for a done turn.
export class TurnActions {
  constructor(chat, turnView) {
    const doc = chat.doc;
    this.chat = chat;
    this.turnView = turnView;
    this.element = element(doc, "div", "citelab-turn-actions");
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Copy the answer");
    this.markdown = iconButton(doc, "copy", "Copy Markdown", "citelab-copy-markdown");
    this.json = iconButton(doc, "copy", "Copy JSON", "citelab-copy-json");
    this.status = element(doc, "span", "citelab-copy-status");
    this.status.setAttribute("role", "status");
    this.markdown.addEventListener("click", () => this.copy("Markdown", markdownOf));
    this.json.addEventListener("click", () => this.copy("JSON", jsonOf));
    this.element.append(this.markdown, this.json, this.status);
    this.element.hidden = true;
  }

  update(turn) {
    show(this.element, turn.status === "done");
    show(this.json, Boolean(turn.message));
  }

  async copy(what, format) {
    const text = format(this.turnView.turn);
    try {
      await (this.chat.host.copy ? this.chat.host.copy(text) : clipboardWrite(this.chat.doc, text));
      this.status.textContent = `Copied as ${what}.`;
      this.status.dataset.state = "copied";
    } catch (error) {
      this.status.textContent = `Could not copy: ${error?.message || "the clipboard refused."}`;
      this.status.dataset.state = "error";
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.status.textContent = "";
    }, COPIED_MS);
  }
}

function markdownOf(turn) {
  return turn.text;
}

function jsonOf(turn) {
  return JSON.stringify(turn.message, null, 2);
}

async function clipboardWrite(doc, text) {
  const clipboard = doc.defaultView?.navigator?.clipboard;
  if (!clipboard?.writeText) throw new Error("this browser gives no clipboard access here.");
  await clipboard.writeText(text);
}
