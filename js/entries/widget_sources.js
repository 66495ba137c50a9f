// anywidget front end of citelab.SourcesPanel: the kernel forwards every event of its chat
// to the panel as the same custom messages, and mirrors the chat's `turns` trait.
import { SOURCES_TRAITS, trait } from "../contract/model.js";
import { SourcesView } from "../views/sources_view.js";
import { hideStaticCopies } from "../kernel/static_copy.js";
import { connectStore, modelKey, storeOf } from "../kernel/widget_store.js";

/** @param {import("../contract/model.js").InitializeProps} props */
function initialize({ model }) {
  return connectStore(model); // listen from the start: no event is lost before a view
}

/** @param {import("../contract/model.js").RenderProps} props */
function render({ model, el }) {
  hideStaticCopies(el.ownerDocument, modelKey(model)); // a live view shows it: see static_copy.js
  const view = new SourcesView(el, storeOf(model), {
    heading: String(trait(model, "heading", SOURCES_TRAITS)),
  });
  return () => view.destroy();
}

export default { initialize, render };
