// anywidget front end of citelab.MessageView: trait `message` holds an AnswerMessage wire
// dict; a suggested-reply chip sends {type: "reply", text} to the kernel.
import { renderMessage } from "./message_view.js";

function initialize() {
  // Nothing streams into a message view: it draws its `message` trait.
}

function render({ model, el }) {
  const draw = () =>
    renderMessage(el, model.get("message"), {
      onReply: (text) => model.send({ type: "reply", text }),
    });
  draw();
  model.on("change:message", draw);
  return () => model.off("change:message", draw);
}

export default { initialize, render };
