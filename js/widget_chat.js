// anywidget front end of citelab.Chat. The message listener lives in initialize(), which
// runs once per model before any view, and the streamed state lives on the model (a store
// kept beside it): a view rendered late, or a second view opened mid-stream, draws every
// token. render() only draws from that state.
import { ChatView } from "./chat_view.js";
import { CHAT_TRAITS, trait } from "./model.js";
import { connectStore, storeOf } from "./widget_store.js";

function initialize({ model }) {
  return connectStore(model);
}

function render({ model, el }) {
  const store = storeOf(model);
  const send = (message) => model.send(message);
  const host = {
    settings: () => ({
      feedbackEnabled: Boolean(trait(model, "feedback_enabled", CHAT_TRAITS)),
      placeholder: String(trait(model, "placeholder", CHAT_TRAITS)),
      showSources: Boolean(trait(model, "show_sources", CHAT_TRAITS)),
    }),
    ask: (question, followup) => store.request({ type: "ask", question, followup }, send).ack,
    feedback: (turn, value, comment) =>
      store.request(
        { type: "feedback", turn_id: turn.turn_id, value, ...(comment ? { comment } : {}) },
        send,
      ).ack,
  };
  const view = new ChatView(el, store, host);
  const redraw = () => view.requestDraw();
  model.on("change:feedback_enabled", redraw);
  model.on("change:placeholder", redraw);
  return () => {
    view.destroy();
    model.off("change:feedback_enabled", redraw);
    model.off("change:placeholder", redraw);
  };
}

export default { initialize, render };
