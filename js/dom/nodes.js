// Small DOM helpers shared by the views: building elements, ids, and writes that leave
// unchanged DOM alone (views redraw every frame while an answer streams; each write, even of
// the same value, invalidates styles and may reset a selection).

/**
 * Create an element with a class and optional text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {Document} doc
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function element(doc, tag, className, text) {
  const node = doc.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Show or hide an element through the `hidden` attribute.
 * @param {HTMLElement} node
 * @param {boolean} visible
 */
export function show(node, visible) {
  if (node.hidden === visible) node.hidden = !visible;
}

let ids = 0;
// Each bundle (chat, sources panel, message view) holds its own copy of this module, and so
// its own counter: a random part per copy keeps the ids of two bundles in one page apart
// (a chat's Sources card and a panel's card for the same source would otherwise share one).
const COPY = Math.random().toString(36).slice(2, 8).padEnd(6, "0");

/**
 * A document-unique id with a readable prefix.
 * @param {string} prefix
 */
export function uniqueId(prefix) {
  ids += 1;
  return `${prefix}-${COPY}-${ids}`;
}

/**
 * Set a property (textContent, disabled, placeholder…) only when its value differs.
 * @template {object} T
 * @template {keyof T} K
 * @param {T} node
 * @param {K} property
 * @param {T[K]} value
 */
export function setIfChanged(node, property, value) {
  if (node[property] !== value) node[property] = value;
}

/**
 * Set an attribute only when its value differs.
 * @param {Element} node
 * @param {string} name
 * @param {string} value
 */
export function setAttributeIfChanged(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

/**
 * Remove an attribute only when it is there.
 * @param {Element} node
 * @param {string} name
 */
export function removeAttributeIfSet(node, name) {
  if (node.hasAttribute(name)) node.removeAttribute(name);
}

/**
 * An HTML element (it has a dataset), whichever window made it.
 * @param {Element} node
 * @returns {node is HTMLElement}
 */
export function isHtml(node) {
  return "dataset" in node;
}
