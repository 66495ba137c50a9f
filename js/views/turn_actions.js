// Copy a done turn's answer: as Markdown (the text and its numbered sources) or as JSON
// (the AnswerMessage).
import { detailOf, referenceHref, sourceLabel } from "../contract/reference.js";
import { iconButton } from "../dom/icons.js";
import { element, show } from "../dom/nodes.js";

/** @typedef {import("../contract/model.js").Turn} Turn */

const COPIED_MS = 2000;

// Copy the answer as Markdown (its text, markers as written, then its sources numbered as
// the text numbers them) or as JSON (the AnswerMessage: MCP content blocks with `_meta`), for
// a done turn.
export class TurnActions {
  /**
   * @param {import("./chat_view.js").ChatView} chat
   * @param {import("./turn_view.js").TurnView} turnView
   */
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
    /** @type {ReturnType<typeof setTimeout>|undefined} */
    this.timer = undefined;
  }

  /** @param {Turn} turn */
  update(turn) {
    show(this.element, turn.status === "done" && !turn.withheld);
    show(this.json, Boolean(turn.message));
  }

  /**
   * @param {string} what
   * @param {(turn: Turn) => string} format
   */
  async copy(what, format) {
    const turn = this.turnView.turn;
    if (!turn) return;
    const text = format(turn);
    try {
      await (this.chat.host.copy ? this.chat.host.copy(text) : clipboardWrite(this.chat.doc, text));
      this.status.textContent = `Copied as ${what}.`;
      this.status.dataset.state = "copied";
    } catch (error) {
      const message = /** @type {{message?: string}|null|undefined} */ (error)?.message;
      this.status.textContent = `Could not copy: ${message || "the clipboard refused."}`;
      this.status.dataset.state = "error";
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.status.textContent = "";
    }, COPIED_MS);
  }
}

/** @param {Turn} turn */
function markdownOf(turn) {
  return answerMarkdown(turn);
}

/**
 * A turn's answer as Markdown to paste elsewhere: the text with its `[n]` markers as written,
 * then "Sources:" with one line per cited source under the number the text uses: its title
 * (with the detail that tells same-title sources apart) linking to its web page, or its URI
 * as code when it has no page a reader could open. Titles are untrusted: escaped so that they
 * stay text wherever the Markdown is rendered.
 * @param {{text: string, references?: import("../contract/model.js").Reference[]|null}} turn
 */
export function answerMarkdown(turn) {
  const byNumber = new Map();
  for (const reference of Array.isArray(turn.references) ? turn.references : []) {
    const number = Number(reference?.number);
    if (Number.isInteger(number) && !byNumber.has(number)) byNumber.set(number, reference);
  }
  if (byNumber.size === 0) return turn.text;
  const lines = [...byNumber.entries()]
    .sort(([a], [b]) => a - b)
    .map(([number, reference]) => `- [${number}] ${sourceMarkdown(reference)}`);
  return `${turn.text.trimEnd()}\n\nSources:\n\n${lines.join("\n")}\n`;
}

/** @param {import("../contract/model.js").Reference} reference */
function sourceMarkdown(reference) {
  const detail = detailOf(reference);
  const label = escapeMarkdown(detail ? `${sourceLabel(reference)} (${detail})` : sourceLabel(reference));
  const href = referenceHref(reference);
  if (href) return `[${label}](<${href.replace(/[<>\s]/g, encodeURIComponent)}>)`;
  const uri = typeof reference.uri === "string" ? reference.uri.replace(/\s+/g, " ").trim() : "";
  return uri ? `${label} (${codeSpan(uri)})` : label;
}

// Backslash-escape what could make a title markup (emphasis, links, code, HTML, entities,
// tables, strike-through); a title is one line.
/** @param {string} text */
function escapeMarkdown(text) {
  return text.replace(/\s+/g, " ").trim().replace(/[\\`*_[\]<>~|&]/g, "\\$&");
}

/**
 * `text` as one code span: fenced by more backticks than any run inside it.
 * @param {string} text
 */
function codeSpan(text) {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** @param {Turn} turn */
function jsonOf(turn) {
  return JSON.stringify(turn.message, null, 2);
}

/**
 * @param {Document} doc
 * @param {string} text
 */
async function clipboardWrite(doc, text) {
  const clipboard = doc.defaultView?.navigator?.clipboard;
  if (!clipboard?.writeText) throw new Error("this browser gives no clipboard access here.");
  await clipboard.writeText(text);
}
