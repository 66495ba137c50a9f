// The kernel displays each widget as two outputs: the live view, then a static HTML copy of
// what it shows (for exports, and for a notebook opened before its kernel runs), which the
// kernel rewrites when a turn ends (src/citelab/widget/_display.py). Where a live view of the
// model runs, the copy would show the conversation a second time: the view hides it, with a
// style rule per model rather than by touching the copy's element, because every rewrite
// gives the copy a new element. The rule stays for the page's life: once a model has had a
// live view here, its views are where it shows.

const MODEL_KEY = /^[0-9a-f]{32}$/; // uuid4().hex, and nothing that could break out of CSS

/**
 * Hide the static copies of the widget model `modelKey` in `doc`. Returns whether it did.
 * @param {Document} doc
 * @param {string|null} modelKey
 */
export function hideStaticCopies(doc, modelKey) {
  if (typeof modelKey !== "string" || !MODEL_KEY.test(modelKey)) return false;
  const name = `citelab-static-${modelKey}`;
  if (doc.getElementById(name)) return true;
  const style = doc.createElement("style");
  style.id = name;
  // JupyterLab (and Notebook 7) would still keep the empty output row: hide it with its copy.
  style.textContent =
    `.${name} { display: none !important; }\n` +
    `.jp-OutputArea-child:has(.${name}) { display: none !important; }\n`;
  doc.head.append(style);
  return true;
}
