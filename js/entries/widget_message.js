// anywidget front end of citelab.MessageView: trait `message` holds an AnswerMessage wire
// dict and `violations` the contract violations the kernel found; a suggested-reply chip
// sends {type: "reply", text} to the kernel. Like the chat, the state is kept per model (by
// `_model_key`) and a view draws only while its element is on the page.
import { frameScheduler } from "../dom/frames.js";
import { subscribeWhileOnPage } from "../dom/presence.js";
import { createState, wireState } from "../kernel/message_state.js";
import { hideStaticCopies } from "../kernel/static_copy.js";
import { connectState, modelKey, stateOf } from "../kernel/widget_store.js";
import { renderMessage } from "../views/message_view.js";

/** @param {import("../contract/model.js").InitializeProps} props */
function initialize({ model }) {
  return connectState(model, createState, wireState);
}

/** @param {import("../contract/model.js").RenderProps} props */
function render({ model, el }) {
  hideStaticCopies(el.ownerDocument, modelKey(model)); // a live view shows it: see static_copy.js
  const state = stateOf(model, createState, wireState);
  // renderMessage replaces the content of its root: it gets one of its own, so the element
  // that watches whether the view is on the page stays.
  const content = el.ownerDocument.createElement("div");
  el.replaceChildren(content);
  /** @type {ReturnType<typeof subscribeWhileOnPage>|null} */
  let subscription = null;
  const draw = () => {
    if (subscription?.following === false) return;
    renderMessage(content, state.message, {
      violations: state.violations,
      onReply: (text) => model.send({ type: "reply", text }),
    });
  };
  subscription = subscribeWhileOnPage(el, state, frameScheduler(draw));
  draw();
  return () => subscription.close();
}

export default { initialize, render };
