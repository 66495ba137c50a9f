// Reading an AnswerMessage wire dict (MCP content blocks with `_meta`, PROTOCOL.md
// "citelab.MessageView"): its `_meta` keys, its sources in priority order, the anchors that
// hold, its suggested replies. The message is untrusted: every part is checked here.
import { codePointIndex, toUtf16 } from "./offsets.js";
import { referenceHref } from "./reference.js";

export const CITATIONS_KEY = "drupal.org/ai.citations";
export const SUGGESTED_REPLIES_KEY = "drupal.org/ai.suggested_replies";
export const SOURCE_URL_KEY = "citelab/url";
export const SOURCE_NUMBER_KEY = "citelab/number";
export const SOURCE_QUOTES_KEY = "citelab/source_quotes";

/**
 * An AnswerMessage wire dict as the contract describes it. It is untrusted: every field may
 * be missing or of another type, and each reader below checks what it uses.
 * @typedef {object} WireMessage
 * @property {WireBlock[]} [content]
 * @property {Record<string, unknown>} [_meta]
 *
 * @typedef {object} WireBlock    One MCP content block: `text` or `resource_link`.
 * @property {string} [type]
 * @property {string} [text]
 * @property {string} [uri]
 * @property {string} [name]
 * @property {string} [title]
 * @property {string} [description]
 * @property {{priority?: unknown}} [annotations]
 * @property {Record<string, unknown>} [_meta]
 *
 * @typedef {WireBlock & {uri: string, number: number, webUrl: string|null}} Source
 *   A resource_link as listed: the number the text uses, the web page it opens.
 * @typedef {{start: number, end: number, number: number, order: number, index?: number}} Anchor
 *   A cited span: UTF-16 offsets into the text, the source number, its place among the
 *   anchors that hold (`order`) and in the text block's list as sent (`index`, which the
 *   source quotes name).
 * @typedef {{anchor: number, sourceUri: string, text: string}} SourceQuote
 *   What a source says that supports one anchor (`anchor`: its `index`): the sentence(s) its
 *   claim rests on.
 * @typedef {{label: string, message: string}} Reply
 */

/**
 * The blocks of a message (none when it is not a message).
 * @param {WireMessage|null|undefined} message
 * @returns {WireBlock[]}
 */
function blocksOf(message) {
  const content = message?.content;
  return Array.isArray(content) ? content.filter((block) => block && typeof block === "object") : [];
}

/**
 * A `_meta` value of a block or message, when `_meta` is an object.
 * @param {{_meta?: unknown}|null|undefined} holder
 * @param {string} key
 * @returns {unknown}
 */
function metaOf(holder, key) {
  const meta = holder?._meta;
  return meta && typeof meta === "object" ? /** @type {Record<string, unknown>} */ (meta)[key] : undefined;
}

/**
 * Read a wire dict into `{texts: [{text, anchors}], sources, replies, ignored}`.
 * @param {WireMessage|null|undefined} message
 * @returns {{texts: {text: string, anchors: Anchor[]}[], sources: Source[], replies: Reply[],
 *   ignored: number}}
 */
export function readMessage(message) {
  const content = blocksOf(message);
  const links = content
    .filter((block) => block.type === "resource_link" && typeof block.uri === "string")
    .map((block, order) => ({ block, order, priority: priorityOf(block) }))
    .sort((a, b) => b.priority - a.priority || a.order - b.order)
    .map(({ block }) => block);
  const numbers = numbersOf(links);
  const sources = links.map((block, index) => ({
    ...block,
    uri: String(block.uri),
    number: numbers[index],
    webUrl: webUrlOf(block),
  }));
  const numberOf = new Map();
  for (const source of sources)
    if (!numberOf.has(source.uri)) numberOf.set(source.uri, source.number);
  let ignored = 0;
  const texts = content
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => {
      const text = String(block.text);
      const { anchors, rejected } = readAnchors(block, text, numberOf);
      ignored += rejected;
      return { text, anchors };
    });
  return { texts, sources, replies: readReplies(message), ignored };
}

/**
 * The web page a resource_link opens: its `_meta["citelab/url"]`, checked again here (the
 * message is untrusted, whoever validated it), or null when it is absent or not a URL the
 * front end links.
 * @param {WireBlock|null|undefined} block
 */
export function webUrlOf(block) {
  const url = metaOf(block, SOURCE_URL_KEY);
  return typeof url === "string" ? referenceHref({ url }) : null;
}

/**
 * The `[n]` of each source in list order: `_meta["citelab/number"]` when every link carries a
 * distinct integer ≥ 1 (conversation-wide numbering: a follow-up citing [1] and [3]), else
 * 1..k.
 * @param {WireBlock[]} links
 * @returns {number[]}
 */
function numbersOf(links) {
  const given = links.map((block) => metaOf(block, SOURCE_NUMBER_KEY));
  const valid = given.filter(isCitationNumber);
  if (links.length && valid.length === given.length && new Set(valid).size === valid.length) {
    return valid;
  }
  return links.map((_, index) => index + 1);
}

/**
 * @param {unknown} value
 * @returns {value is number}
 */
function isCitationNumber(value) {
  return typeof value === "number" && Number.isInteger(value) && value >= 1;
}

/** @param {WireBlock} block */
function priorityOf(block) {
  const priority = block.annotations?.priority;
  return typeof priority === "number" && Number.isFinite(priority) ? priority : -1;
}

/**
 * The anchors of a text block that hold, and how many did not.
 * @param {WireBlock} block
 * @param {string} text  the block's text
 * @param {Map<string, number>} numberOf  source uri → number
 * @returns {{anchors: Anchor[], rejected: number}}
 */
function readAnchors(block, text, numberOf) {
  const raw = metaOf(block, CITATIONS_KEY);
  if (!Array.isArray(raw)) return { anchors: [], rejected: 0 };
  const index = codePointIndex(text);
  /** @type {Anchor[]} */
  const anchors = [];
  for (const [position, anchor] of raw.entries()) {
    const start = toUtf16(index, anchor?.startIndex);
    const end = toUtf16(index, anchor?.endIndex);
    const number = numberOf.get(anchor?.sourceUri);
    const holds =
      number !== undefined &&
      start >= 0 &&
      end > start &&
      text.slice(start, end) === anchor.citedText;
    if (holds) anchors.push({ start, end, number, order: anchors.length, index: position });
  }
  return { anchors, rejected: raw.length - anchors.length };
}

/**
 * @param {WireMessage|null|undefined} message
 * @returns {Reply[]}
 */
function readReplies(message) {
  const raw = metaOf(message, SUGGESTED_REPLIES_KEY);
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((reply) => typeof reply?.label === "string" && reply.label.trim())
    .map((reply) => ({
      label: reply.label,
      message: typeof reply.message === "string" && reply.message ? reply.message : reply.label,
    }));
}

/**
 * The anchors of an AnswerMessage's text block as `[{start, end, number, order}]` (UTF-16
 * offsets into `text`), numbered by the chat's references (uri → the number the text uses).
 * Anchors that do not hold are left out; none when the message's text is not `text`.
 * @param {WireMessage|null|undefined} message
 * @param {string} text
 * @param {{uri?: unknown, number?: unknown}[]|null|undefined} references
 * @returns {Anchor[]}
 */
export function readAnchorsOf(message, text, references) {
  const block = blocksOf(message).find(
    (candidate) => candidate.type === "text" && typeof candidate.text === "string",
  );
  if (!block || block.text !== text || !Array.isArray(references)) return [];
  /** @type {Map<string, number>} */
  const numberOf = new Map();
  for (const reference of references) {
    if (typeof reference?.uri === "string" && !numberOf.has(reference.uri))
      numberOf.set(reference.uri, Number(reference.number));
  }
  return readAnchors(block, text, numberOf).anchors;
}

/**
 * Whether a message's text block has any anchors at all (read them only then).
 * @param {WireMessage|null|undefined} message
 */
export function hasAnchors(message) {
  return blocksOf(message).some((block) => {
    const anchors = metaOf(block, CITATIONS_KEY);
    return Array.isArray(anchors) && anchors.length > 0;
  });
}

/**
 * The source quotes of an AnswerMessage's text block (`_meta["citelab/source_quotes"]`), by
 * the index of the anchor each supports; a quote that is not well formed is left out.
 * @param {WireMessage|null|undefined} message
 * @returns {Map<number, SourceQuote>}
 */
export function readSourceQuotes(message) {
  const block = blocksOf(message).find((candidate) => candidate.type === "text");
  const raw = metaOf(block, SOURCE_QUOTES_KEY);
  /** @type {Map<number, SourceQuote>} */
  const quotes = new Map();
  if (!Array.isArray(raw)) return quotes;
  for (const quote of raw) {
    const anchor = quote?.anchorIndex;
    const fine =
      Number.isInteger(anchor) &&
      anchor >= 0 &&
      typeof quote.sourceUri === "string" &&
      typeof quote.text === "string" &&
      quote.text.trim() !== "";
    if (fine && !quotes.has(anchor)) {
      quotes.set(anchor, { anchor, sourceUri: quote.sourceUri, text: quote.text });
    }
  }
  return quotes;
}
