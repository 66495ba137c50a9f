// Bring an element's content to new (sanitized) content by changing only what differs. A
// streamed paragraph that grew by a word keeps its elements and text nodes, and its last text
// node gets the new characters appended: the browser lays out the grown paragraph again but
// reuses what it knew of the old text, instead of building and shaping a new paragraph, and a
// selection or focus inside the block survives.
//
// The result is the source's content exactly (same node types, names, attributes, text, in
// order); only nodes of the source that had no counterpart are moved in. Hand-written rather
// than a morphing library: the content is sanitized Markdown (no ids, forms or scripts to
// preserve), so a greedy walk is all it takes.

const ELEMENT = 1;
const TEXT = 3;

/**
 * Make the children of `target` equal to those of `source` (a fragment it consumes).
 * @param {Node} target
 * @param {Node} source
 */
export function morphChildren(target, source) {
  let current = target.firstChild;
  for (let next = source.firstChild; next; ) {
    const following = next.nextSibling;
    if (current && sameKind(current, next)) {
      morphNode(current, next);
      current = current.nextSibling;
    } else {
      target.insertBefore(next, current);
    }
    next = following;
  }
  while (current) {
    const stale = current;
    current = current.nextSibling;
    stale.remove();
  }
}

/**
 * @param {Node} a
 * @param {Node} b
 */
function sameKind(a, b) {
  return (
    a.nodeType === b.nodeType &&
    a.nodeName === b.nodeName &&
    (a.nodeType === ELEMENT || a.nodeType === TEXT)
  );
}

/**
 * @param {Node} current
 * @param {Node} next  of the same kind (sameKind)
 */
function morphNode(current, next) {
  if (current.nodeType === TEXT) {
    const text = /** @type {Text} */ (current);
    const nextText = /** @type {Text} */ (next);
    const old = text.data;
    if (old === nextText.data) return;
    // Appending tells the browser the old characters did not change.
    if (nextText.data.startsWith(old)) text.appendData(nextText.data.slice(old.length));
    else text.data = nextText.data;
    return;
  }
  syncAttributes(/** @type {Element} */ (current), /** @type {Element} */ (next));
  morphChildren(current, next);
}

/**
 * @param {Element} current
 * @param {Element} next
 */
function syncAttributes(current, next) {
  for (const name of current.getAttributeNames()) {
    if (!next.hasAttribute(name)) current.removeAttribute(name);
  }
  for (const name of next.getAttributeNames()) {
    const value = next.getAttribute(name) ?? "";
    if (current.getAttribute(name) !== value) current.setAttribute(name, value);
  }
}
