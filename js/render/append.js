// The common streaming step, without a parse or a sanitize: a block that grew by plain text
// at its end ("…the rooms</p>\n" → "…the rooms are open</p>\n") gets the new characters
// appended to its last text node. Sanitizing is the dearest part of an update (DOMPurify
// walks the whole block, and on a frame it runs cold: ~0.5 ms however small the block), and
// at 1,000 tokens/s most frames only add words.
//
// Why this is the same DOM the full path would give, and as safe:
// - The new HTML is the old with `text` inserted before a run of closing tags, and `text` has
//   no "<" or "&" (nor NUL/CR): the HTML parser turns it into characters appended to the text
//   at that point, and changes nothing else. Only in the elements of TEXT_CONTAINERS: in a
//   table row, text is moved out of the table; after <pre>, a newline is dropped.
// - DOMPurify's verdicts do not depend on plain text except for its markup probe (text that
//   looks like a tag in an element with no element child), which also needs markup in the
//   element's HTML: `untouched` (the sanitizer removed nothing) rules that out. So sanitizing
//   the new HTML would keep every node it kept before, and the text.
// - Only a text node is ever written; text is never parsed. The caller applies this only to
//   a block whose last full sanitize was `untouched` (see BlockView).

const TEXT_NODE = 3;
const TEXT_CONTAINERS = new Set([
  "a",
  "code",
  "em",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "li",
  "p",
  "strong",
  "td",
  "th",
]);
/** @typedef {{text: string, path: string[]}} Appended */

const CLOSING_TAG = /<\/([a-z][a-z0-9]*)>\n?$/;
const NOT_PLAIN = /[<&\0\r]/;

/**
 * If `after` is `before` with plain text inserted before some closing tags at its end,
 * returns `{text, path}`: the text, and the tag names from the outermost element of the
 * block down to the one that gets it. Otherwise null.
 * @param {string|null} before
 * @param {string} after
 * @returns {Appended|null}
 */
export function appendedText(before, after) {
  if (typeof before !== "string" || after.length <= before.length) return null;
  /** @type {string[]} */
  const path = [];
  let end = before.length; // `before.slice(end)` is a run of closing tags
  for (;;) {
    const closing = CLOSING_TAG.exec(before.slice(Math.max(0, end - 64), end));
    if (!closing) return null;
    end -= closing[0].length;
    path.push(closing[1]);
    if (!TEXT_CONTAINERS.has(closing[1])) continue; // text cannot go here; try further in
    const found = insertion(before, after, end);
    if (found !== null) return { text: found, path };
  }
}

/**
 * @param {string} before
 * @param {string} after
 * @param {number} at
 */
function insertion(before, after, at) {
  const added = after.length - before.length;
  if (!after.startsWith(before.slice(0, at)) || !after.endsWith(before.slice(at))) return null;
  const text = after.slice(at, at + added);
  return NOT_PLAIN.test(text) ? null : text;
}

/**
 * Append `appended.text` inside `block` (a block wrapper showing the old HTML) at
 * `appended.path`. Returns false, changing nothing, when the block's DOM has no such place.
 * @param {Element} block
 * @param {Appended} appended
 */
export function appendToBlock(block, { text, path }) {
  let node = block;
  for (const tag of path) {
    const child = node.lastElementChild;
    if (!child || child.localName !== tag) return false;
    node = child;
  }
  const last = node.lastChild;
  if (last?.nodeType === TEXT_NODE) /** @type {Text} */ (last).appendData(text);
  else node.append(node.ownerDocument.createTextNode(text));
  return true;
}
