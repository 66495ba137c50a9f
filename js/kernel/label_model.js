// A labeller's state kept per widget model (widget_store.js), fed by the model's traits and
// its acks; the lost-kernel watch says when the kernel holding the labeller is gone.
import { LabelState } from "../state/label_state.js";

/** @typedef {import("../contract/model.js").WidgetModel} WidgetModel */

// The traits a labeller's views draw (model.js LABEL_TRAITS, but `_kernel_session`).
const TRAIT_EVENTS = ["item", "progress", "last", "notices", "file_name", "show_verdicts"].map(
  (name) => `change:${name}`,
);

/** @param {WidgetModel} model */
export function createLabelState(model) {
  const state = new LabelState();
  state.read((name) => model.get(name));
  return state;
}

/**
 * @param {WidgetModel} model
 * @param {LabelState} state
 * @returns {() => void}  stop listening
 */
export function wireLabelState(model, state) {
  // The kernel sends a label's traits in one message, then its ack: one redraw for both.
  const onChange = () => {
    state.read((name) => model.get(name));
    state.changed();
  };
  /** @param {unknown} message */
  const onMessage = (message) => state.receive(message);
  for (const name of TRAIT_EVENTS) model.on(name, onChange);
  model.on("msg:custom", onMessage);
  return () => {
    for (const name of TRAIT_EVENTS) model.off(name, onChange);
    model.off("msg:custom", onMessage);
  };
}
