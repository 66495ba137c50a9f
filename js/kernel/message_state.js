// The state of a message view's model (the traits it draws), kept per model like a chat's
// store (widget_store.js), and the views to tell when it changes.
import { MESSAGE_TRAITS, trait } from "../contract/model.js";

/** The traits a message view draws, and the views to tell when they change. */
/** @typedef {import("../contract/model.js").WidgetModel} WidgetModel */

export class MessageState {
  /** @param {WidgetModel} model */
  constructor(model) {
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {import("../contract/message.js").WireMessage|null} */
    this.message = null;
    /** @type {unknown[]} */
    this.violations = [];
    this.read(model);
  }

  /** @param {WidgetModel} model */
  read(model) {
    // The kernel's message, as the kernel read it (its validation is shown in `violations`).
    this.message = /** @type {import("../contract/message.js").WireMessage|null} */ (
      trait(model, "message", MESSAGE_TRAITS)
    );
    const violations = trait(model, "violations", MESSAGE_TRAITS);
    this.violations = Array.isArray(violations) ? violations : [];
  }

  /**
   * @param {() => void} listener
   * @returns {() => void}
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  changed() {
    for (const listener of [...this.listeners]) listener();
  }
}

/** @param {WidgetModel} model */
export const createState = (model) => new MessageState(model);

/**
 * @param {WidgetModel} model
 * @param {MessageState} state
 */
export function wireState(model, state) {
  // The kernel sets `message`, then `violations`: views redraw once per frame for both.
  const onChange = () => {
    state.read(model);
    state.changed();
  };
  model.on("change:message", onChange);
  model.on("change:violations", onChange);
  return () => {
    model.off("change:message", onChange);
    model.off("change:violations", onChange);
  };
}
