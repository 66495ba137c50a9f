// The state of a message view's model (the traits it draws), kept per model like a chat's
// store (widget_store.js), and the views to tell when it changes.
import { MESSAGE_TRAITS, trait } from "../contract/model.js";

/** The traits a message view draws, and the views to tell when they change. */
export class MessageState {
  constructor(model) {
    this.listeners = new Set();
    this.read(model);
  }

  read(model) {
    this.message = trait(model, "message", MESSAGE_TRAITS);
    const violations = trait(model, "violations", MESSAGE_TRAITS);
    this.violations = Array.isArray(violations) ? violations : [];
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    for (const listener of [...this.listeners]) listener();
  }
}

export const createState = (model) => new MessageState(model);

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
