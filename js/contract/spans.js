// The cited spans of a source (`Reference.cited_spans`: the sentence(s) of the source a claim
// of the answer rests on) and where they sit in a document's text. The server gives each
// span's text with its offsets in the cited translation's content, in Unicode code points;
// the browser's strings index UTF-16 units (offsets.js). A span is placed where its offsets
// say only when the text there is the span's text; else at the first place its text occurs;
// else nowhere (a document in another language, or changed since): never at a wrong place.
import { codePointIndex, toUtf16 } from "./offsets.js";
import { referenceKey } from "./reference.js";

/** @typedef {import("./model.js").CitedSpan} CitedSpan */
/** @typedef {import("./model.js").Reference} Reference */
/** @typedef {{start: number, end: number}} Range  UTF-16 offsets, end exclusive */

/**
 * The cited spans of a reference that can be placed: those with a text that is not blank.
 * @param {{cited_spans?: unknown}|null|undefined} reference
 * @returns {CitedSpan[]}
 */
export function citedSpansOf(reference) {
  const spans = reference?.cited_spans;
  if (!Array.isArray(spans)) return [];
  return spans.filter(
    (span) => span && typeof span === "object" && typeof span.text === "string" && span.text.trim(),
  );
}

/**
 * Where `spans` sit in `content`: UTF-16 ranges in document order, overlapping or touching
 * ones joined; spans that cannot be placed are left out.
 * @param {string} content
 * @param {readonly CitedSpan[]} spans
 * @returns {Range[]}
 */
export function spanRanges(content, spans) {
  if (!spans.length || !content) return [];
  /** @type {number[]|null} */
  let index = null;
  /** @type {Range[]} */
  const ranges = [];
  for (const span of spans) {
    index ??= codePointIndex(content);
    const range = placeSpan(content, index, span);
    if (range) ranges.push(range);
  }
  return joined(ranges);
}

/**
 * @param {string} content
 * @param {number[]} index  code point → UTF-16 (offsets.js)
 * @param {CitedSpan} span
 * @returns {Range|null}
 */
function placeSpan(content, index, span) {
  const start = toUtf16(index, span.start);
  const end = toUtf16(index, span.end);
  if (start >= 0 && end > start && content.slice(start, end) === span.text) return { start, end };
  const at = content.indexOf(span.text);
  return at >= 0 ? { start: at, end: at + span.text.length } : null;
}

/**
 * @param {Range[]} ranges
 * @returns {Range[]}
 */
function joined(ranges) {
  ranges.sort((a, b) => a.start - b.start || a.end - b.end);
  /** @type {Range[]} */
  const out = [];
  for (const range of ranges) {
    const last = out.at(-1);
    if (last && range.start <= last.end) last.end = Math.max(last.end, range.end);
    else out.push({ ...range });
  }
  return out;
}

/**
 * The cited spans of `reference` and of every reference in `references` that is the same
 * source (referenceKey), each once, in the order met: a source cited in several turns of a
 * conversation has one card, and its document view marks what every turn cited.
 * @param {Reference} reference
 * @param {Iterable<Reference>} references
 * @returns {CitedSpan[]}
 */
export function conversationSpans(reference, references) {
  const key = referenceKey(reference);
  /** @type {Map<string, CitedSpan>} */
  const spans = new Map();
  const add = (/** @type {CitedSpan} */ span) => {
    const id = JSON.stringify([span.text, span.start ?? null, span.end ?? null]);
    if (!spans.has(id)) spans.set(id, span);
  };
  citedSpansOf(reference).forEach(add);
  if (key === null) return [...spans.values()];
  for (const other of references) if (referenceKey(other) === key) citedSpansOf(other).forEach(add);
  return [...spans.values()];
}
