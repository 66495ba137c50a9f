// Inline citation markers as a markdown-it inline rule, so code spans, code blocks, links and
// escapes are already handled by the parser. The grammar is Python's
// (`src/citelab/contract/_markers.py`, what finalize and the scorers read; a test feeds both
// the same cases): `[3]`, `[1][3]` (two groups), `[1, 3]`, `[1,3]` (spaces only around a
// comma), `[2-4]` / `[2–4]` (a range, no spaces around its dash); numbers without leading
// zeros; at most MAX_GROUP_NUMBERS numbers in a group. Not markers: `[1](url)` (a link),
// `[1][ref]` / `[1][]` (reference links), `[text][1]` (a reference link's label), `[[1]]`
// (a chain inside brackets), `[^1]` (footnote syntax), `\[1]` (escaped), anything inside a
// link's text or inside code. `great![1]` is a marker (an image needs `(` after its label).
//
// A marker renders as the model wrote it, each number turned into a link:
//   [<a href="#cite-T-3" data-ref-turn="T" data-ref-index="3">3</a>]
// The href is provisional: the view points it at the reference card (possibly an earlier
// turn's card for a repeated source) once it knows the references.

/** @typedef {import("markdown-it").StateInline} StateInline */
/** @typedef {import("markdown-it").Token} Token */
/** @typedef {{number?: number, text: string}} MarkerPart  a number, or the text between */
/** @typedef {{end: number, parts: MarkerPart[], numbers: number[]}} MarkerGroup */

export const MAX_GROUP_NUMBERS = 50;
const MAX_DIGITS = 4;
const SEPARATOR = / *, */y; // spaces only (no tabs or line breaks) around a comma
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]

/**
 * Parse a marker group starting at `pos` (which must be "["). Returns
 * `{end, parts, numbers}` or null. `parts` keeps the raw text: numbers and separators.
 * @param {string} src
 * @param {number} pos
 * @param {number} [max]
 * @returns {MarkerGroup|null}
 */
export function parseMarkerGroup(src, pos, max = src.length) {
  if (src.charCodeAt(pos) !== OPEN) return null;
  /** @type {MarkerPart[]} */
  const parts = [];
  /** @type {number[]} */
  const numbers = [];
  let i = pos + 1;
  for (;;) {
    const first = readNumber(src, i, max);
    if (!first) return null;
    parts.push({ number: first.value, text: first.text });
    i = first.end;
    const range = readRangeEnd(src, i, max, first.value);
    if (range === false) return null;
    if (range) {
      parts.push({ text: range.dash }, { number: range.value, text: range.text });
      for (let n = first.value; n <= range.value; n++) numbers.push(n);
      i = range.end;
    } else {
      numbers.push(first.value);
    }
    if (numbers.length > MAX_GROUP_NUMBERS) return null;
    if (src.charCodeAt(i) === CLOSE) return { end: i + 1, parts, numbers };
    SEPARATOR.lastIndex = i;
    const sep = SEPARATOR.exec(src);
    if (!sep || i + sep[0].length > max) return null;
    parts.push({ text: sep[0] });
    i += sep[0].length;
  }
}

/**
 * @param {string} src
 * @param {number} pos
 * @param {number} max
 */
function readNumber(src, pos, max) {
  let end = pos;
  while (end < max && end - pos <= MAX_DIGITS && isDigit(src.charCodeAt(end))) end++;
  if (end === pos || end - pos > MAX_DIGITS) return null;
  const text = src.slice(pos, end);
  if (text.length > 1 && text[0] === "0") return null; // no leading zeros: [01] is text
  return { value: Number(text), text, end };
}

// null: no range here; false: a malformed or too large range (the group is no marker).
/**
 * @param {string} src
 * @param {number} pos
 * @param {number} max
 * @param {number} low
 */
function readRangeEnd(src, pos, max, low) {
  const dash = /^[-–]/.exec(src.slice(pos, Math.min(max, pos + 1)));
  if (!dash) return null;
  const high = readNumber(src, pos + dash[0].length, max);
  if (!high || high.value < low || high.value - low + 1 > MAX_GROUP_NUMBERS) return false;
  return { dash: dash[0], value: high.value, text: high.text, end: high.end };
}

/**
 * @param {number} code
 */
function isDigit(code) {
  return code >= 0x30 && code <= 0x39;
}

/**
 * @param {StateInline} state
 * @param {boolean} silent
 */
function citationRule(state, silent) {
  const { src, pos, posMax } = state;
  // Silent mode only serves link-label scanning: there a marker must count as the plain
  // brackets it is, or `[see [1]](url)` would look like a nested link and stop being one.
  if (silent || src.charCodeAt(pos) !== OPEN) return false;
  if (state.linkLevel > 0) return false; // never a link inside a link's text
  if (isLabelOrInBrackets(state)) return false;
  const group = parseMarkerGroup(src, pos, posMax);
  if (!group) return false;
  const next = src.charCodeAt(group.end);
  if (next === 0x28) return false; // [1](url)
  if (next === OPEN && !parseMarkerGroup(src, group.end, posMax)) return false; // [1][ref]
  const token = state.push("citation", "", 0);
  token.meta = { parts: group.parts, numbers: group.numbers };
  token.content = src.slice(pos, group.end);
  state.pos = group.end;
  return true;
}

const MARKER_CHARS = /[0-9 ,\-–]/;

/**
 * The grammar's context rules before a chain at `state.pos`: directly after an unescaped `]`
 * that closes no marker of this chain, it is a reference link's label (`[text][1]`); with
 * only marker characters between it and brackets around it, it is inside brackets
 * (`[[1]]`, `[1, [2]]`).
 * @param {StateInline} state
 */
function isLabelOrInBrackets(state) {
  const { src, pos } = state;
  const last = state.tokens[state.tokens.length - 1];
  const inChain = state.pending === "" && last !== undefined && last.type === "citation";
  if (inChain) return false; // the rules looked at the chain's first group
  if (pos > 0 && src.charCodeAt(pos - 1) === CLOSE && !escaped(src, pos - 1)) return true;
  let before = pos - 1;
  while (before >= 0 && MARKER_CHARS.test(src[before])) before--;
  if (before < 0 || src.charCodeAt(before) !== OPEN || escaped(src, before)) return false;
  let after = pos;
  for (;;) {
    const group = parseMarkerGroup(src, after, state.posMax);
    if (!group) break;
    after = group.end;
  }
  while (after < state.posMax && MARKER_CHARS.test(src[after])) after++;
  return after > pos && src.charCodeAt(after) === CLOSE;
}

/**
 * An odd number of backslashes before `at`.
 * @param {string} src
 * @param {number} at
 */
function escaped(src, at) {
  let slashes = 0;
  while (at - slashes - 1 >= 0 && src.charCodeAt(at - slashes - 1) === 0x5c) slashes++;
  return slashes % 2 === 1;
}

/**
 * The href a marker gets before the view knows where the card is.
 * @param {string} turn
 * @param {number} number
 */
export function provisionalHref(turn, number) {
  return `#cite-${turn}-${number}`;
}

/**
 * Keep a client-side turn id safe inside an id, an href fragment and an attribute.
 * @param {unknown} turn
 */
export function safeTurnId(turn) {
  return String(turn ?? "").replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * @type {import("markdown-it").RendererRule}
 */
function renderCitation(tokens, idx, _options, env) {
  const turn = safeTurnId(/** @type {{citelabTurn?: string}|undefined} */ (env)?.citelabTurn ?? "");
  const inner = /** @type {MarkerPart[]} */ (tokens[idx].meta?.parts ?? [])
    .map((part) =>
      part.number === undefined
        ? escapeText(part.text)
        : `<a href="${provisionalHref(turn, part.number)}" data-ref-turn="${turn}"` +
          ` data-ref-index="${part.number}">${part.text}</a>`,
    )
    .join("");
  return `[${inner}]`;
}

/**
 * @param {string} text
 */
function escapeText(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * markdown-it plugin: `md.use(citationMarkers)`.
 * @param {import("markdown-it").MarkdownIt} md
 */
export function citationMarkers(md) {
  md.inline.ruler.before("link", "citation", citationRule);
  md.renderer.rules.citation = renderCitation;
}
