// Feedback on a done turn: thumbs up/down, then an optional comment.
import { questionForm, showFormError } from "../dom/forms.js";
import { iconButton } from "../dom/icons.js";
import { element, show } from "../dom/nodes.js";

/** @typedef {import("../contract/model.js").Turn} Turn */

/** @type {{value: "up"|"down", icon: import("../dom/icons.js").IconName, text: string}[]} */
const THUMBS = [
  { value: "up", icon: "thumbUp", text: "Helpful" },
  { value: "down", icon: "thumbDown", text: "Not helpful" },
];

export class FeedbackView {
  /**
   * @param {import("./chat_view.js").ChatView} chat
   * @param {import("./turn_view.js").TurnView} turnView
   */
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
      this.sendComment();
    });
    this.status = element(doc, "span", "citelab-feedback-status");
    this.status.setAttribute("role", "status");
    this.element.append(...this.buttons, this.status, this.comment.form);
    this.element.hidden = true;
    /** @type {"up"|"down"|null} */
    this.value = null;
  }

  /**
   * @param {Turn} turn
   * @param {boolean} enabled
   */
  update(turn, enabled) {
    show(this.element, Boolean(enabled && turn.status === "done" && !turn.no_answer));
    if (turn.feedback?.value && this.value === null) this.press(turn.feedback.value);
  }

  /** @param {"up"|"down"} value */
  press(value) {
    this.value = value;
    for (const button of this.buttons) {
      button.setAttribute("aria-pressed", String(button.dataset.value === value));
    }
    show(this.comment.form, true);
  }

  /**
   * Send a rating (and a comment). Resolves with the host's `{error?}`.
   * @param {"up"|"down"|null} value
   * @param {string} [comment]
   * @returns {Promise<import("../state/store.js").Ack>}
   */
  async send(value, comment) {
    const turn = this.turnView.turn;
    if (!value || !turn) return { error: "no rating" };
    this.press(value);
    this.status.textContent = "Sending…";
    const result = (await this.chat.host.feedback(turn, value, comment || undefined)) ?? {};
    const what = comment ? "Comment" : "Feedback";
    this.status.textContent = result.error
      ? `${what} not saved: ${result.error}`
      : comment
        ? "Comment sent. Thanks for your feedback."
        : "Thanks for your feedback.";
    this.element.dataset.state = result.error ? "error" : "sent";
    return result;
  }

  // The comment box: a sent comment is confirmed and the box emptied; one that failed stays
  // in the box, to send again.
  async sendComment() {
    const { input } = this.comment;
    const comment = input.value.trim();
    showFormError(this.comment, comment ? "" : "Please type a comment first.");
    if (!comment) return;
    const result = await this.send(this.value, comment);
    if (!result.error && input.value.trim() === comment) input.value = "";
  }
}
