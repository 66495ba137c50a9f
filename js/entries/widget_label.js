// anywidget front end of citelab.Labeller: the state (traits, the request in flight, a lost
// kernel) lives per model from initialize() on, as the chat's does; render() draws it while
// its element is on the page. A label goes to the kernel as {type: "label", id, label}, an
// undo as {type: "undo"}; each gets an ack.
import { LABEL_TRAITS } from "../contract/model.js";
import { frameScheduler } from "../dom/frames.js";
import { subscribeWhileOnPage } from "../dom/presence.js";
import { watchKernel } from "../kernel/kernel_watch.js";
import { createLabelState, wireLabelState } from "../kernel/label_model.js";
import { hideStaticCopies } from "../kernel/static_copy.js";
import { connectState, modelKey, stateOf } from "../kernel/widget_store.js";
import { LABELLER_DISCONNECTED } from "../state/label_state.js";
import { LabelView } from "../views/label_view.js";

export { LABELLER_DISCONNECTED } from "../state/label_state.js";
export { LABEL_TRAITS };

/** @param {import("../contract/model.js").InitializeProps} props */
function initialize({ model }) {
  const cleanup = connectState(model, createLabelState, wireLabelState);
  const state = stateOf(model, createLabelState, wireLabelState);
  const watch = watchKernel(model, () => state.setDisconnected(LABELLER_DISCONNECTED));
  return () => {
    watch.stop();
    cleanup();
  };
}

/** @param {import("../contract/model.js").RenderProps} props */
function render({ model, el }) {
  hideStaticCopies(el.ownerDocument, modelKey(model)); // a live view shows it: see static_copy.js
  const state = stateOf(model, createLabelState, wireLabelState);
  /** @param {object} message */
  const send = (message) => model.send(message);
  const content = el.ownerDocument.createElement("div");
  el.replaceChildren(content);
  const view = new LabelView(content, state, {
    label: (id, label) => state.request({ type: "label", id, label }, send),
    undo: () => state.request({ type: "undo" }, send),
  });
  // Draw once per frame, and only while on the page (presence.js).
  const subscription = subscribeWhileOnPage(el, state, frameScheduler(() => view.draw()));
  const observer = watchDisconnected(el, state);
  return () => {
    observer.disconnect();
    subscription.close();
  };
}

// JupyterLab marks the view of a model that lost its kernel with this class.
/**
 * @param {HTMLElement} el
 * @param {import("../state/label_state.js").LabelState} state
 */
function watchDisconnected(el, state) {
  const check = () => {
    if (el.classList.contains("jupyter-widgets-disconnected")) {
      state.setDisconnected(LABELLER_DISCONNECTED);
    }
  };
  const win = /** @type {Window & typeof globalThis} */ (el.ownerDocument.defaultView);
  const observer = new win.MutationObserver(check);
  observer.observe(el, { attributes: true, attributeFilter: ["class"] });
  check();
  return observer;
}

export default { initialize, render };
