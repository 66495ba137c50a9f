// The question boxes' state that outlives a view: what was typed in them and which one had the
// focus, kept in the chat's store (one per model, shared by its views).
//
// JupyterLab replaces a chat's view when a turn ends (it redraws the output whose HTML the
// kernel rewrote), which would drop a half-typed question and the focus. The new view takes
// the drafts, and takes the focus when it was in a question box of the view it replaces and
// nothing else took it since. The follow-up box, hidden while an answer streams, gets the
// focus back the same way when it shows again. Once a conversation has begun the question
// box hides (a follow-up continues it): a focus it held moves on to the follow-up box.

const PLACES = 6; // ancestors remembered, to tell which view stands where the old one stood

export class QuestionBoxes {
  /**
   * @param {HTMLElement} root  the view's root
   * @param {{ui: import("./store.js").ViewMemory}} store
   * @param {Record<string, HTMLInputElement|HTMLTextAreaElement>} inputs  by name
   */
  constructor(root, store, inputs) {
    this.root = root;
    this.doc = root.ownerDocument;
    this.memory = store.ui;
    this.inputs = inputs;
    for (const [name, input] of Object.entries(inputs)) {
      input.value = this.memory.drafts[name] ?? "";
      input.addEventListener("input", () => {
        this.memory.drafts[name] = input.value;
      });
      input.addEventListener("focusin", () => this.remember(name));
      // Decide after the event: a focus lost to a removal or to hiding is not a choice.
      input.addEventListener("focusout", () => setTimeout(() => this.noticeBlur(name, input)));
    }
  }

  /**
   * Set a box's text and its remembered draft.
   * @param {HTMLInputElement|HTMLTextAreaElement} input
   * @param {string} value
   */
  setDraft(input, value) {
    input.value = value;
    const name = Object.keys(this.inputs).find((key) => this.inputs[key] === input);
    if (name !== undefined) this.memory.drafts[name] = value;
  }

  /** @param {string} name */
  remember(name) {
    this.memory.focus = { name, root: this.root, places: ancestors(this.root) };
  }

  /**
   * @param {string} name
   * @param {HTMLInputElement|HTMLTextAreaElement} input
   */
  noticeBlur(name, input) {
    const focus = this.memory.focus;
    if (focus?.name !== name || focus.root !== this.root) return;
    if (!this.root.isConnected || isHidden(input) || this.doc.activeElement === input) return;
    this.memory.focus = null; // the person moved on
  }

  /** Give the focus back to the box that had it, when nothing else has taken it. */
  restoreFocus() {
    const focus = this.memory.focus;
    if (!focus) return;
    let input = this.inputs[focus.name];
    if (input && isHidden(input) && focus.name === "ask" && this.inputs.followup) {
      const next = this.inputs.followup;
      if (!isHidden(next) && this.doc.activeElement !== input) {
        focus.name = "followup";
        input = next;
      }
    }
    if (!input || !this.root.isConnected || isHidden(input)) return;
    const active = this.doc.activeElement;
    if (active === input || (active && active !== this.doc.body)) return;
    if (focus.root !== this.root && !standsWhere(this.root, focus.places)) return;
    input.focus({ preventScroll: true });
    const end = input.value.length;
    input.setSelectionRange?.(end, end);
    this.remember(focus.name);
  }
}

/**
 * @param {HTMLElement} node
 * @returns {HTMLElement[]}
 */
function ancestors(node) {
  /** @type {HTMLElement[]} */
  const found = [];
  for (let parent = node.parentElement; parent && found.length < PLACES; ) {
    found.push(parent);
    parent = parent.parentElement;
  }
  return found;
}

// The nearest remembered ancestor still on the page holds this root: another view of the same
// chat elsewhere in the notebook does not take the focus.
/**
 * @param {HTMLElement} root
 * @param {HTMLElement[]} places
 */
function standsWhere(root, places) {
  const nearest = places.find((place) => place.isConnected);
  return nearest === undefined || nearest.contains(root);
}

/** @param {HTMLElement} input */
function isHidden(input) {
  return input.closest("[hidden]") !== null;
}
