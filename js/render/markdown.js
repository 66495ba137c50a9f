// Markdown → top-level blocks of HTML (not yet sanitized). markdown-it with raw HTML off and
// our link rule; lists always tight; table alignment as data-align; citation markers.
import MarkdownIt from "markdown-it";
import { citationMarkers } from "./citations.js";
import { sanitizeToString } from "./sanitize.js";
import { isAllowedUrl } from "../contract/urls.js";

/** @typedef {import("markdown-it").StateCore} StateCore */
/** @typedef {import("markdown-it").Token} Token */
/** @typedef {import("markdown-it").MarkdownIt} MarkdownIt */
/** @typedef {{href: string, title: string}} LinkReference */
/**
 * What a parse reads and records besides the text (markdown-it's env, and ours).
 * @typedef {object} ParseEnv
 * @property {Record<string, LinkReference>} [references]   markdown-it's definitions
 * @property {string} [citelabTurn]                 the turn the markers link for
 * @property {Definition[]} [citelabDefinitions]    filled while parsing (parseBlocks)
 * @property {Map<string, string>} [citelabLookups] labels looked up (stream.js)
 * @property {Record<string, LinkReference>} [citelabPlainReferences]
 * @typedef {{label: string, map: [number, number]|null}} Definition
 * @typedef {{html: string, map: [number, number]|null}} Block
 */

const LIST_OPEN = new Set(["bullet_list_open", "ordered_list_open"]);
const LIST_CLOSE = new Set(["bullet_list_close", "ordered_list_close"]);
const ALIGN = /^text-align:(left|right|center)$/;

/** A configured markdown-it instance (one per module is enough: it keeps no parse state). */
export function createMarkdown() {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.validateLink = isAllowedUrl;
  md.use(citationMarkers);
  md.core.ruler.push("citelab_tight_lists", tightLists);
  md.core.ruler.push("citelab_align", alignAsData);
  md.core.ruler.push("citelab_numeric_links", numericLinks);
  md.core.ruler.before("strip_references", "citelab_definitions", recordDefinitions);
  md.core.ruler.before("inline", "citelab_track_lookups", trackLookups);
  md.core.ruler.after("inline", "citelab_untrack_lookups", untrackLookups);
  return md;
}

// Lists render tight whatever blank lines the model wrote: CommonMark's loose lists would
// wrap each item in <p> and give every item a paragraph margin. Two paragraphs in one item
// keep a line break between them instead of running together.
/**
 * @param {StateCore} state
 */
function tightLists(state) {
  const tokens = state.tokens;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (LIST_OPEN.has(token.type)) depth++;
    else if (LIST_CLOSE.has(token.type)) depth--;
    else if (depth > 0 && token.type.startsWith("paragraph_")) {
      token.hidden = true;
      if (token.type === "paragraph_open" && tokens[i - 1]?.type === "paragraph_close") {
        tokens.splice(i, 0, new state.Token("hardbreak", "br", 0));
        i++;
      }
    }
  }
}

// markdown-it writes alignment as style="text-align:…", which the allowlists do not allow.
/**
 * @param {StateCore} state
 */
function alignAsData(state) {
  for (const token of state.tokens) {
    if (token.type !== "th_open" && token.type !== "td_open") continue;
    const match = ALIGN.exec(String(token.attrGet("style") ?? ""));
    if (!match) continue;
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== "style");
    token.attrSet("data-align", match[1]);
  }
}

// Link text that could pass for a citation marker: only digits, brackets, commas, dashes.
const NUMERIC_TEXT = /^[\s[\]0-9,\-\u2013]*[0-9][\s[\]0-9,\-\u2013]*$/;
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/;

// "[1](https://evil.example)" or "[[1]](…)" would look like a citation marker: such a link
// shows where it goes, "1 (evil.example)", so a reader can tell it from one (as in Python).
/**
 * @param {StateCore} state
 */
function numericLinks(state) {
  for (const token of state.tokens) {
    if (token.type !== "inline" || !token.children) continue;
    const children = token.children;
    for (let i = 0; i < children.length; i++) {
      if (children[i].type === "link_open") i = markNumericLink(state, children, i);
    }
  }
}

/**
 * @param {StateCore} state
 * @param {Token[]} children
 * @param {number} start
 */
function markNumericLink(state, children, start) {
  let end = start + 1;
  while (end < children.length && children[end].type !== "link_close") end++;
  const inner = children.slice(start + 1, end);
  if (end === children.length || inner.some((t) => t.type !== "text" && t.type !== "code_inline"))
    return end;
  if (!NUMERIC_TEXT.test(inner.map((t) => t.content).join(""))) return end;
  const href = String(children[start].attrGet("href") ?? "");
  const found = AUTHORITY.exec(href);
  const where = new state.Token("text", "", 0);
  where.content = ` (${found ? found[1] : href})`;
  children.splice(end, 0, where);
  return end + 1;
}

// markdown-it drops the definition tokens right after block parsing; streaming needs to
// know where each definition was (a settled one applies to every later block).
/**
 * @param {StateCore} state
 */
function recordDefinitions(state) {
  const definitions = /** @type {ParseEnv} */ (state.env).citelabDefinitions;
  if (!definitions) return;
  for (const token of state.tokens) {
    if (token.type === "reference_definition") {
      definitions.push({ label: String(token.meta?.label), map: token.map });
    }
  }
}

// Streaming needs to know which link labels inline parsing looked up (a definition written
// later can change an earlier block), so env.references is observed while inlines parse.
/**
 * @param {StateCore} state
 */
function trackLookups(state) {
  const env = /** @type {ParseEnv} */ (state.env);
  const lookups = env.citelabLookups;
  const references = env.references;
  if (!lookups || !references) return;
  env.citelabPlainReferences = references;
  env.references = new Proxy(references, {
    get(target, key) {
      const value = typeof key === "string" ? target[key] : undefined;
      if (typeof key === "string") lookups.set(key, referenceValueKey(value));
      return value;
    },
  });
}

/**
 * @param {StateCore} state
 */
function untrackLookups(state) {
  const env = /** @type {ParseEnv} */ (state.env);
  if (!env.citelabPlainReferences) return;
  env.references = env.citelabPlainReferences;
  delete env.citelabPlainReferences;
}

/**
 * A comparable form of a reference definition (or of its absence).
 * @param {LinkReference|undefined} value
 */
export function referenceValueKey(value) {
  return value ? `${value.href}\u0000${value.title}` : "";
}

/**
 * Parse `src` and group the tokens into top-level blocks (heading, paragraph, list, table,
 * fenced code, …). Returns `{blocks: [{html, map}], definitions: [{label, map}]}`; `map`
 * is markdown-it's [firstLine, endLine) in `src`.
 * @param {MarkdownIt} md
 * @param {string} src
 * @param {ParseEnv} env
 * @returns {{blocks: Block[], definitions: Definition[]}}
 */
export function parseBlocks(md, src, env) {
  /** @type {Definition[]} */
  const definitions = [];
  env.citelabDefinitions = definitions;
  const tokens = md.parse(src, env);
  delete env.citelabDefinitions;
  /** @type {Block[]} */
  const blocks = [];
  let i = 0;
  while (i < tokens.length) {
    const start = i;
    if (tokens[i].nesting === 1) {
      let depth = 0;
      do depth += tokens[i++].nesting;
      while (depth > 0 && i < tokens.length);
    } else {
      i++;
    }
    const html = md.renderer.render(tokens.slice(start, i), md.options, env);
    blocks.push({ html, map: tokens[start].map });
  }
  return { blocks, definitions };
}

/** @type {MarkdownIt|null} */
let shared = null;

/** The shared markdown-it instance. */
export function markdown() {
  shared ??= createMarkdown();
  return shared;
}

/**
 * Render all of `text` as a list of block HTML strings (unsanitized).
 * @param {string} text
 * @param {{turn?: string}} [options]
 * @returns {string[]}
 */
export function renderBlocks(text, { turn = "" } = {}) {
  const env = { citelabTurn: turn, references: Object.create(null) };
  return parseBlocks(markdown(), text, env).blocks.map((block) => block.html);
}

/**
 * Markdown → sanitized HTML in one go (the done frame; the message view).
 * @param {string} text
 * @param {{turn?: string}} [options]
 */
export function markdownToHtml(text, options = {}) {
  return sanitizeToString(renderBlocks(text, options).join(""));
}
