// The question forms of the chat (question, follow-up, feedback comment).
import { element, show, uniqueId } from "./nodes.js";

/**
 * @typedef {{form: HTMLFormElement, input: HTMLInputElement, submit: HTMLButtonElement,
 *   error: HTMLParagraphElement}} QuestionForm
 */

/**
 * A labelled text input inside a form with a submit button.
 * @param {Document} doc
 * @param {{className: string, label: string, placeholder?: string, button: string}} options
 * @returns {QuestionForm}
 */
export function questionForm(doc, { className, label, placeholder, button }) {
  const form = element(doc, "form", className);
  form.noValidate = true;
  const id = uniqueId("citelab-input");
  const labelElement = element(doc, "label", "citelab-label", label);
  labelElement.htmlFor = id;
  const input = element(doc, "input", "citelab-input");
  input.type = "text";
  input.id = id;
  input.name = "question";
  input.autocomplete = "off";
  input.placeholder = placeholder ?? "";
  const submit = element(doc, "button", "citelab-submit", button);
  submit.type = "submit";
  const error = element(doc, "p", "citelab-form-error");
  error.setAttribute("role", "alert");
  error.hidden = true;
  form.append(labelElement, input, submit, error);
  submitOnEnter(input);
  return { form, input, submit, error };
}

/**
 * Show a form's error line (hidden when `message` is empty).
 * @param {{error: HTMLElement}} form
 * @param {string} message
 */
export function showFormError(form, message) {
  form.error.textContent = message;
  show(form.error, Boolean(message));
}

/**
 * Enter (no modifier, not composing) submits the input's form; Shift+Enter inserts a newline
 * in a textarea and does nothing in a one-line input. Browsers do this for a plain <form>, but
 * not inside a JupyterLab output, whose notebook shortcuts take Enter (and Shift+Enter runs
 * the cell): those keys are handled here and go no further.
 * @param {HTMLInputElement|HTMLTextAreaElement} input
 */
export function submitOnEnter(input) {
  /** @type {HTMLElement} */ (input).addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    event.stopPropagation();
    if (event.shiftKey) {
      if (input.localName !== "textarea") event.preventDefault();
      return;
    }
    event.preventDefault();
    input.form?.requestSubmit();
  });
}
