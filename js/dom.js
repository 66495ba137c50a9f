// Small DOM helpers shared by the views.

/** Create an element with a class and optional text. */
export function element(doc, tag, className, text) {
  const node = doc.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Show or hide an element through the `hidden` attribute. */
export function show(node, visible) {
  if (node.hidden === visible) node.hidden = !visible;
}

/**
 * Run `draw` at most once per animation frame however often `request` is called: tokens can
 * arrive much faster than frames, and each draw has a fixed cost.
 */
export function frameScheduler(draw, win = globalThis.window) {
  const raf = win?.requestAnimationFrame?.bind(win) ?? ((callback) => setTimeout(callback, 16));
  let queued = false;
  return function request() {
    if (queued) return;
    queued = true;
    raf(() => {
      queued = false;
      draw();
    });
  };
}

/** About how long one slice of deferred work may take (a frame is 16 ms at 60 Hz). */
export const SLICE_MS = 2;

/**
 * Run `work(hasTime)` once per animation frame, from the next frame on, until it returns
 * true; `hasTime()` is true while another step as long as the longest one of the slice so
 * far (the time between two calls) still ends within SLICE_MS, so a slice does not run over
 * by a step. Returns a function that cancels the slices still to come.
 */
export function frameSlices(work, win = globalThis.window) {
  const frames = Boolean(win?.requestAnimationFrame);
  const next = frames ? (run) => win.requestAnimationFrame(run) : (run) => setTimeout(run, 16);
  const cancel = frames ? (id) => win.cancelAnimationFrame(id) : clearTimeout;
  const clock = win?.performance ?? globalThis.performance;
  let pending = null;
  const slice = () => {
    let last = clock.now();
    const end = last + SLICE_MS;
    let longest = 0;
    const hasTime = () => {
      const now = clock.now();
      longest = Math.max(longest, now - last);
      last = now;
      return now + longest <= end;
    };
    pending = work(hasTime) ? null : next(slice);
  };
  pending = next(slice);
  return () => {
    if (pending !== null) cancel(pending);
    pending = null;
  };
}

let ids = 0;
// Each bundle (chat, sources panel, message view) holds its own copy of this module, and so
// its own counter: a random part per copy keeps the ids of two bundles in one page apart
// (a chat's Sources card and a panel's card for the same source would otherwise share one).
const COPY = Math.random().toString(36).slice(2, 8).padEnd(6, "0");

/** A document-unique id with a readable prefix. */
export function uniqueId(prefix) {
  ids += 1;
  return `${prefix}-${COPY}-${ids}`;
}

/** A labelled text input inside a form with a submit button. */
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
 * Enter (no modifier, not composing) submits the input's form; Shift+Enter inserts a newline
 * in a textarea and does nothing in a one-line input. Browsers do this for a plain <form>, but
 * not inside a JupyterLab output, whose notebook shortcuts take Enter (and Shift+Enter runs
 * the cell): those keys are handled here and go no further.
 */
export function submitOnEnter(input) {
  input.addEventListener("keydown", (event) => {
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
