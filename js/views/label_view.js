// The labelling widget's view (citelab.Labeller): one (claim, passages) pair at a time, the
// sentence(s) the claim rests on marked in each passage (render/marked_text.js, as the Read
// view marks a document), and a decision taken with a key or a button: supported (1, Y),
// partly (2, P), not supported (3, N), skip (S, 4); undo (U, Backspace) takes the last label
// back. The kernel saves a label before it shows the next pair: the view sends one request
// at a time and moves on only when the kernel's traits say so.
//
// Keyboard: the view is one focusable group (click it or Tab to it). Inside it, keys go no
// further than the view (Tab and Escape excepted): a JupyterLab output's keys otherwise reach
// the notebook's command-mode shortcuts (1 makes the cell a heading, D D deletes it).
// Buttons keep the focus across pairs (they are never rebuilt); when the focused element
// goes (a link of the last pair), the group takes the focus back.
import { referenceHref } from "../contract/reference.js";
import { element, setAttributeIfChanged, setIfChanged, show, uniqueId } from "../dom/nodes.js";
import { markedText } from "../render/marked_text.js";

/** @typedef {import("../contract/model.js").LabelPair} LabelPair */
/** @typedef {import("../contract/model.js").LabelPassage} LabelPassage */
/** @typedef {import("../contract/model.js").JudgeVerdict} JudgeVerdict */
/** @typedef {import("../state/label_state.js").LabelState} LabelState */
/** @typedef {import("../state/label_state.js").LabelAck} LabelAck */
/**
 * @typedef {object} LabelHost
 * @property {(id: string, label: string) => Promise<LabelAck>} label
 * @property {() => Promise<LabelAck>} undo
 */

/** The decisions, in button order: the label, its button's text, its keys. */
export const DECISIONS = Object.freeze([
  { label: "supported", text: "Supported", keys: ["1", "Y"] },
  { label: "partially_supported", text: "Partly", keys: ["2", "P"] },
  { label: "not_supported", text: "Not supported", keys: ["3", "N"] },
  { label: "skip", text: "Skip", keys: ["S", "4"] },
]);

/** The keys that take the last label back. */
export const UNDO_KEYS = Object.freeze(["U", "Backspace"]);

/** How each label reads in a sentence. */
export const LABEL_WORDS = Object.freeze({
  supported: "supported",
  partially_supported: "partly supported",
  not_supported: "not supported",
  skip: "skipped",
});

/** @type {Map<string, string>} key (upper-cased) → label */
const BY_KEY = new Map(DECISIONS.flatMap(({ label, keys }) => keys.map((key) => [key, label])));

/**
 * What a key press asks for: a label, `"undo"`, or null (not a labelling key; keys with
 * Ctrl, Alt or Meta never are, nor a key held down or typed while composing).
 * @param {{key: string, ctrlKey?: boolean, altKey?: boolean, metaKey?: boolean,
 *   isComposing?: boolean}} event
 * @returns {string|null}
 */
export function keyAction(event) {
  if (event.ctrlKey || event.altKey || event.metaKey || event.isComposing) return null;
  const key = event.key.length === 1 ? event.key.toUpperCase() : event.key;
  if (UNDO_KEYS.includes(key)) return "undo";
  return BY_KEY.get(key) ?? null;
}

/**
 * The judges' verdicts in words: "lexical: supported · other: not supported".
 * @param {JudgeVerdict[]|undefined} verdicts
 */
export function verdictText(verdicts) {
  return (verdicts ?? [])
    .map(({ judge, verdict }) => `${judge}: ${verdict ? "supported" : "not supported"}`)
    .join(" · ");
}

/** @param {string} label */
function labelWords(label) {
  return /** @type {Record<string, string>} */ (LABEL_WORDS)[label] ?? label;
}

export class LabelView {
  /** @type {HTMLElement} */ section;
  /** @type {HTMLParagraphElement} */ progressText;
  /** @type {HTMLProgressElement} */ progressBar;
  /** @type {HTMLUListElement} */ notices;
  /** @type {HTMLElement} */ pair;
  /** @type {HTMLParagraphElement} */ done;
  /** @type {HTMLDivElement} */ actions;
  /** @type {Map<string, HTMLButtonElement>} */ buttons;
  /** @type {HTMLButtonElement} */ undoButton;
  /** @type {HTMLParagraphElement} */ keys;
  /** @type {HTMLParagraphElement} */ anchoring;
  /** @type {HTMLParagraphElement} */ status;
  /** @type {HTMLParagraphElement} */ error;

  /**
   * Draws `state` into `root` now; the host calls draw() when the state changes.
   * @param {HTMLElement} root
   * @param {LabelState} state
   * @param {LabelHost} host
   */
  constructor(root, state, host) {
    this.root = root;
    this.state = state;
    this.host = host;
    this.doc = root.ownerDocument;
    /** @type {string|null|undefined} the pair drawn, by id (undefined: none drawn yet) */
    this.drawn = undefined;
    this.build();
    this.draw();
    this.announce(this.resumedText());
  }

  build() {
    const { doc } = this;
    const section = element(doc, "section", "citelab citelab-labeller");
    section.tabIndex = 0;
    section.setAttribute("role", "group");
    const question = "Does the passage support the claim?";
    const title = element(doc, "h3", "citelab-labeller-title", question);
    title.id = uniqueId("citelab-label-title");
    section.setAttribute("aria-labelledby", title.id);
    this.progressText = element(doc, "p", "citelab-labeller-progress");
    this.progressBar = element(doc, "progress", "citelab-labeller-bar");
    this.progressBar.setAttribute("aria-label", "Decisions made");
    this.notices = element(doc, "ul", "citelab-labeller-notices");
    this.pair = element(doc, "article", "citelab-labeller-pair");
    this.pair.setAttribute("aria-label", "The pair to label");
    this.done = element(doc, "p", "citelab-labeller-done");
    this.done.tabIndex = -1;
    this.actions = this.buildActions();
    this.keys = element(doc, "p", "citelab-labeller-keys", keyHelp());
    this.keys.id = uniqueId("citelab-label-keys");
    section.setAttribute("aria-describedby", this.keys.id);
    this.anchoring = element(doc, "p", "citelab-labeller-note");
    this.status = element(doc, "p", "citelab-labeller-status");
    this.status.setAttribute("role", "status");
    this.error = element(doc, "p", "citelab-labeller-error");
    this.error.setAttribute("role", "alert");
    section.append(
      title,
      this.progressText,
      this.progressBar,
      this.notices,
      this.pair,
      this.done,
      this.actions,
      this.keys,
      this.anchoring,
      this.status,
      this.error,
    );
    section.addEventListener("keydown", (event) => this.onKey(event));
    this.section = section;
    this.root.replaceChildren(section);
  }

  buildActions() {
    const { doc } = this;
    const actions = element(doc, "div", "citelab-labeller-actions");
    actions.setAttribute("role", "group");
    actions.setAttribute("aria-label", "Label this pair");
    this.buttons = new Map();
    for (const { label, text, keys } of DECISIONS) {
      const button = decisionButton(doc, text, keys, `citelab-labeller-${label}`);
      button.dataset.label = label;
      button.addEventListener("click", () => this.decide(label));
      this.buttons.set(label, button);
      actions.append(button);
    }
    this.undoButton = decisionButton(doc, "Undo last", ["U"], "citelab-labeller-undo");
    this.undoButton.addEventListener("click", () => this.undo());
    actions.append(this.undoButton);
    return actions;
  }

  draw() {
    const { state } = this;
    const { decided, wanted, skipped } = state.progress;
    const file = state.fileName ? ` · saved to ${state.fileName}` : "";
    setIfChanged(
      this.progressText,
      "textContent",
      `${decided} of ${wanted} decided · ${skipped} skipped${file}${estimateText(state.progress.estimate)}`,
    );
    setIfChanged(this.progressBar, "max", Math.max(1, Number(wanted) || 0));
    setIfChanged(this.progressBar, "value", Number(decided) || 0);
    this.drawNotices();
    this.drawPair();
    const ready = state.ready;
    for (const button of this.buttons.values()) disable(button, !ready || !state.item);
    disable(this.undoButton, !ready || !state.last);
    setAttributeIfChanged(this.section, "aria-busy", String(state.pending !== null));
    const note =
      state.showVerdicts === "after" && (state.progress.judges ?? []).length
        ? "The judges' verdicts show after you label a pair, so they do not sway you."
        : "";
    setIfChanged(this.anchoring, "textContent", note);
    show(this.anchoring, Boolean(note));
    const problem = state.disconnected ?? state.error;
    setIfChanged(this.error, "textContent", problem ?? "");
    show(this.error, Boolean(problem));
  }

  drawNotices() {
    const notices = this.state.notices;
    const key = JSON.stringify(notices);
    if (this.notices.dataset.key === key) return;
    this.notices.dataset.key = key;
    this.notices.replaceChildren(
      ...notices.map((text) => element(this.doc, "li", "citelab-labeller-notice", text)),
    );
    show(this.notices, notices.length > 0);
  }

  drawPair() {
    const item = this.state.item;
    const id = item ? item.id : null;
    if (id === this.drawn) return;
    this.drawn = id;
    const hadFocus = this.section.contains(this.doc.activeElement);
    show(this.pair, item !== null);
    show(this.done, item === null);
    if (item) {
      this.pair.replaceChildren(...pairParts(this.doc, item));
    } else {
      this.pair.replaceChildren();
      this.done.textContent = this.doneText();
    }
    if (!hadFocus) return;
    if (item === null) this.done.focus({ preventScroll: true });
    else if (!this.section.contains(this.doc.activeElement)) {
      this.section.focus({ preventScroll: true });
    }
  }

  doneText() {
    const { decided, skipped } = this.state.progress;
    const file = this.state.fileName || "the labels file";
    return (
      `Done: ${count(decided, "decision")} saved to ${file} (${skipped} skipped). ` +
      "A judge card reads that file; a larger sample goes on from here."
    );
  }

  resumedText() {
    const { decided, skipped } = this.state.progress;
    if (!decided && !skipped) return "";
    const saved = `${count(decided, "decision")} and ${count(skipped, "skip")}`;
    return `Resumed: ${saved} were saved before.`;
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (event.key === "Tab" || event.key === "Escape") return;
    if (event.ctrlKey || event.altKey || event.metaKey) return;
    event.stopPropagation();
    const action = keyAction(event);
    if (action === null) return;
    event.preventDefault();
    if (event.repeat) return;
    if (action === "undo") this.undo();
    else this.decide(action);
  }

  /** @param {string} label */
  async decide(label) {
    const item = this.state.item;
    if (!item || !this.state.ready) return;
    const ack = await this.host.label(item.id, label);
    if (ack.error) return; // state.error shows it
    const last = this.state.last;
    const verdicts = verdictText(last?.id === item.id ? last.verdicts : []);
    this.announce(
      `Saved: ${labelWords(label)}.` + (verdicts ? ` The judges said ${verdicts}.` : ""),
    );
  }

  async undo() {
    if (!this.state.ready || !this.state.last) return;
    const ack = await this.host.undo();
    if (!ack.error) this.announce("The last label was taken back: its pair is shown again.");
  }

  /** @param {string} text */
  announce(text) {
    setIfChanged(this.status, "textContent", text);
    show(this.status, Boolean(text));
  }
}

/**
 * @param {number} n
 * @param {string} noun
 */
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** The shortcut line under the buttons. */
function keyHelp() {
  const decisions = DECISIONS.map(
    ({ label, keys }) => `${keys.join(" or ")} ${labelWords(label)}`,
  ).join(" · ");
  return `Keys (click the labeller first, or Tab to it): ${decisions} · U or Backspace undo.`;
}

/**
 * @param {Document} doc
 * @param {string} text
 * @param {readonly string[]} keys
 * @param {string} className
 */
function decisionButton(doc, text, keys, className) {
  const button = element(doc, "button", `citelab-labeller-button ${className}`);
  button.type = "button";
  const shortcut = element(doc, "kbd", "citelab-labeller-kbd", keys[0]);
  shortcut.setAttribute("aria-hidden", "true");
  button.append(shortcut, ` ${text}`);
  button.setAttribute("aria-keyshortcuts", keys.join(" "));
  return button;
}

/**
 * Disabled for clicks and keys, yet focusable: a disabled button would drop the focus.
 * @param {HTMLButtonElement} button
 * @param {boolean} disabled
 */
function disable(button, disabled) {
  setAttributeIfChanged(button, "aria-disabled", String(disabled));
}

/**
 * The claim, where it comes from, its passages and (when shown before labelling) the judges'
 * verdicts. Every text is untrusted and set as text.
 * @param {Document} doc
 * @param {LabelPair} item
 * @returns {HTMLElement[]}
 */
function pairParts(doc, item) {
  const parts = [];
  parts.push(element(doc, "h4", "citelab-labeller-heading", "Claim"));
  parts.push(element(doc, "p", "citelab-labeller-claim", String(item.claim ?? "")));
  const context = Array.isArray(item.context) ? item.context : [];
  if (context.length) {
    const list = element(doc, "dl", "citelab-labeller-context");
    for (const line of context) {
      if (!Array.isArray(line) || line.length < 2) continue;
      list.append(
        element(doc, "dt", "", String(line[0])),
        element(doc, "dd", "", String(line[1])),
      );
    }
    parts.push(list);
  }
  const passages = Array.isArray(item.passages) ? item.passages : [];
  passages.forEach((passage, index) => {
    parts.push(passagePart(doc, passage, index, passages.length));
  });
  const verdicts = verdictText(item.verdicts);
  if (verdicts) {
    parts.push(element(doc, "p", "citelab-labeller-verdicts", `The judges said ${verdicts}.`));
  }
  return parts;
}

/**
 * @param {Document} doc
 * @param {LabelPassage} passage
 * @param {number} index
 * @param {number} count
 */
function passagePart(doc, passage, index, count) {
  const part = element(doc, "section", "citelab-labeller-passage");
  const name = count > 1 ? `Cited passage ${index + 1} of ${count}` : "Cited passage";
  const number = typeof passage.number === "number" ? ` [${passage.number}]` : "";
  const title = typeof passage.title === "string" && passage.title ? `: ${passage.title}` : "";
  const heading = element(doc, "h4", "citelab-labeller-heading", `${name}${number}${title}`);
  heading.id = uniqueId("citelab-label-passage");
  part.setAttribute("aria-labelledby", heading.id);
  part.append(heading);
  const uri = typeof passage.uri === "string" ? passage.uri : "";
  if (uri) {
    const line = element(doc, "p", "citelab-labeller-uri");
    const href = referenceHref({ uri });
    if (href) {
      const link = element(doc, "a", "", uri);
      link.setAttribute("href", href);
      link.setAttribute("target", "_blank");
      link.setAttribute("rel", "noopener noreferrer");
      line.append(link);
    } else {
      line.textContent = uri;
    }
    part.append(line);
  }
  const text = element(doc, "div", "citelab-labeller-text");
  const content = typeof passage.text === "string" ? passage.text : "";
  text.append(...markedText(doc, content, { cited_spans: passage.cited_spans }));
  part.append(text);
  return part;
}

/**
 * The estimate so far, as one clause of the progress line ("" before the first label).
 * @param {import("../contract/model.js").LabelEstimate | null | undefined} estimate
 * @returns {string}
 */
export function estimateText(estimate) {
  if (!estimate) return "";
  const { value, low, high, width, more, too_few: few, unlabelled_strata: missing } = estimate;
  const shown = (/** @type {number} */ x) => (Number.isFinite(x) ? x.toFixed(2) : "—");
  const range = `${shown(value)} [${shown(low)}, ${shown(high)}], width ${shown(width)}`;
  const flag = few ? " (too few units)" : "";
  const ahead = more === null || more === undefined ? "" : more > 0 ? ` · ${more} more for ±0.05` : " · ±0.05 reached";
  const partial = missing && missing.length ? ` · of the labelled strata only (none yet: ${missing.join(", ")})` : "";
  return ` · supported: ${range}${flag}${ahead}${partial}`;
}
