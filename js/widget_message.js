// anywidget front end of citelab.MessageView: trait `message` holds an AnswerMessage wire
// dict and `violations` the contract violations the kernel found; a suggested-reply chip
// sends {type: "reply", text} to the kernel. Like the chat, the state is kept per model (by
// `_model_key`) and a view draws only while its element is on the page.
import { frameScheduler } from "./dom.js";
import { renderMessage } from "./message_view.js";
import { MESSAGE_TRAITS, trait } from "./model.js";
import { subscribeWhileOnPage } from "./presence.js";
import { hideStaticCopies } from "./static_copy.js";
import { connectState, modelKey, stateOf } from "./widget_store.js";

/** The traits a message view draws, and the views to tell when they change. */
class MessageState {
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

const createState = (model) => new MessageState(model);

function wireState(model, state) {
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

function initialize({ model }) {
  return connectState(model, createState, wireState);
}

function render({ model, el }) {
  hideStaticCopies(el.ownerDocument, modelKey(model)); // a live view shows it: see static_copy.js
  const state = stateOf(model, createState, wireState);
  // renderMessage replaces the content of its root: it gets one of its own, so the element
  // that watches whether the view is on the page stays.
  const content = el.ownerDocument.createElement("div");
  el.replaceChildren(content);
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
