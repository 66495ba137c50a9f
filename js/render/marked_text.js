// A source's text with the cited spans marked: the sentence(s) a claim rests on, where its
// `cited_spans` can be placed in the text (contract/spans.js), else its passage where it
// occurs, else nothing. Every part is text (untrusted); the marks are <mark> elements. The
// Read view marks a document with it, the labelling widget a cited passage.
import { passageOf } from "../contract/reference.js";
import { citedSpansOf, spanRanges } from "../contract/spans.js";
import { element } from "../dom/nodes.js";

/** @typedef {{cited_spans?: unknown, passage?: unknown, snippet?: unknown}} MarkedSource */

/**
 * The parts of `content` in order: strings (text as it is) and one
 * `<mark class="citelab-cited …">` per placed span (overlapping spans joined). The marks of
 * cited spans also carry `citelab-document-span`, the passage's `citelab-document-passage`.
 * @param {Document} doc
 * @param {string} content
 * @param {MarkedSource} source
 * @returns {(string|HTMLElement)[]}
 */
export function markedText(doc, content, source) {
  let ranges = spanRanges(content, citedSpansOf(source));
  let className = "citelab-cited citelab-document-span";
  if (!ranges.length) {
    const passage = passageOf(source);
    const at = passage ? content.indexOf(passage) : -1;
    ranges = at >= 0 ? [{ start: at, end: at + passage.length }] : [];
    className = "citelab-cited citelab-document-passage";
  }
  /** @type {(string|HTMLElement)[]} */
  const parts = [];
  let done = 0;
  for (const { start, end } of ranges) {
    if (start > done) parts.push(content.slice(done, start));
    parts.push(element(doc, "mark", className, content.slice(start, end)));
    done = end;
  }
  if (done < content.length) parts.push(content.slice(done));
  return parts;
}
