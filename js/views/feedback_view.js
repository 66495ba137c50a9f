// Feedback on a done turn: thumbs up/down, then an optional comment.
import { questionForm } from "../dom/forms.js";
import { iconButton } from "../dom/icons.js";
import { element, show } from "../dom/nodes.js";

const THUMBS = [
  { value: "up", icon: "thumbUp", text: "Helpful" },
  { value: "down", icon: "thumbDown", text: "Not helpful" },
];

export class FeedbackView {
  constructor(chat, turnView) {
    const doc = chat.doc;
    this.chat = chat;
    this.turnView = turnView;
    this.element = element(doc, "div", "citelab-feedback");
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", "Was this answer helpful?");
    this.buttons = THUMBS.map(({ value, icon: name, text }) => {
      const button = iconButton(doc, name, text, "citelab-thumb");
      button.dataset.value = value;
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", () => this.send(value));
      return button;
    });
    this.comment = questionForm(doc, {
      className: "citelab-feedback-comment",
      label: "Comment (optional)",
      placeholder: "What was good or missing?",
      button: "Send comment",
    });
    this.comment.input.name = "comment";
    this.comment.form.hidden = true;
    this.comment.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(this.value, this.comment.input.value.trim());
    });
    this.status = element(doc, "span", "citelab-feedback-status");
    this.status.setAttribute("role", "status");
    this.element.append(...this.buttons, this.status, this.comment.form);
    this.element.hidden = true;
    this.value = null;
  }

  update(turn, enabled) {
    show(this.element, Boolean(enabled && turn.status === "done" && !turn.no_answer));
    if (turn.feedback?.value && this.value === null) this.press(turn.feedback.value);
  }

  press(value) {
    this.value = value;
    for (const button of this.buttons) {
      button.setAttribute("aria-pressed", String(button.dataset.value === value));
    }
    show(this.comment.form, true);
  }

  async send(value, comment) {
    if (!value) return;
    this.press(value);
    this.status.textContent = "Sending…";
    const result = await this.chat.host.feedback(this.turnView.turn, value, comment || undefined);
    this.status.textContent = result?.error
      ? `Feedback not saved: ${result.error}`
      : "Thanks for your feedback.";
    this.element.dataset.state = result?.error ? "error" : "sent";
  }
}
