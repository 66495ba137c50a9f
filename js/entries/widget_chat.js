// anywidget front end of citelab.Chat. The message listener lives in initialize(), which
// runs once per model before any view, and the streamed state lives in a store kept per model
// (keyed by the `_model_key` trait: each view gets its own proxy of the model): a view
// rendered late, or a second view opened mid-stream, draws every token. render() only draws
// from that store, while its element is on the page. A live view hides the static copy the
// kernel displays after it (static_copy.js).
import { CHAT_TRAITS, listOf, trait } from "../contract/model.js";
import { DISCONNECTED_MESSAGE, watchConnection, watchKernel } from "../kernel/kernel_watch.js";
import { hideStaticCopies } from "../kernel/static_copy.js";
import { connectStore, modelKey, storeOf } from "../kernel/widget_store.js";
import { ChatView } from "../views/chat_view.js";

export { DISCONNECTED_MESSAGE } from "../kernel/kernel_watch.js";

// The listener for a lost kernel lives here too, so a chat with no view on the page yet
// (or scrolled out of sight) still learns it: see kernel_watch.js for what JupyterLab does.
/** @typedef {import("../contract/model.js").RenderProps} RenderProps */

/** @param {import("../contract/model.js").InitializeProps} props */
function initialize({ model }) {
  const cleanup = connectStore(model);
  const store = storeOf(model);
  const watch = watchKernel(model, () => store.setDisconnected(DISCONNECTED_MESSAGE));
  kernelChecks.set(store, watch.check);
  return () => {
    watch.stop();
    kernelChecks.delete(store);
    cleanup();
  };
}

// Per store, the check that asks the kernel whether it is still the one holding the chat.
/** @type {WeakMap<import("../state/store.js").ChatStore, () => Promise<void>>} */
const kernelChecks = new WeakMap();

/** @param {RenderProps} props */
function render({ model, el }) {
  hideStaticCopies(el.ownerDocument, modelKey(model));
  const store = storeOf(model);
  /** @param {object} message */
  const send = (message) => model.send(message);
  /** @type {import("../views/chat_view.js").ChatHost} */
  const host = {
    // Read at every draw; the store redraws its views when one of these traits changes.
    settings: () => ({
      feedbackEnabled: Boolean(trait(model, "feedback_enabled", CHAT_TRAITS)),
      placeholder: String(trait(model, "placeholder", CHAT_TRAITS)),
      showSources: Boolean(trait(model, "show_sources", CHAT_TRAITS)),
      starters: listOf(trait(model, "starter_questions", CHAT_TRAITS)),
    }),
    ask: (question, followup) => store.request({ type: "ask", question, followup }, send).ack,
    stop: () => store.request({ type: "stop" }, send).ack,
    newConversation: async () => {
      const result = await store.request({ type: "new_conversation" }, send).ack;
      if (!result.error) store.reset();
      return result;
    },
    document: (reference) => store.request({ type: "document", uri: reference.uri }, send).ack,
    feedback: (turn, value, comment) =>
      store.request(
        { type: "feedback", turn_id: turn.turn_id, value, ...(comment ? { comment } : {}) },
        send,
      ).ack,
  };
  const view = new ChatView(el, store, host);
  const watch = watchConnection(el, store);
  // Someone coming back to the chat (focus in it): is its kernel still there?
  const check = () => kernelChecks.get(store)?.();
  el.addEventListener("focusin", check);
  return () => {
    el.removeEventListener("focusin", check);
    watch.disconnect();
    view.destroy();
  };
}

export default { initialize, render };
