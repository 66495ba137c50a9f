// Reading an AnswerMessage wire dict (MCP content blocks with `_meta`, PROTOCOL.md
// "citelab.MessageView"): its `_meta` keys, its sources in priority order, the anchors that
// hold, its suggested replies. The message is untrusted: every part is checked here.
import { codePointIndex, toUtf16 } from "./offsets.js";
import { referenceHref } from "./reference.js";

export const CITATIONS_KEY = "drupal.org/ai.citations";
export const SUGGESTED_REPLIES_KEY = "drupal.org/ai.suggested_replies";
export const SOURCE_URL_KEY = "citelab/url";
export const SOURCE_NUMBER_KEY = "citelab/number";

/** Read a wire dict into `{texts: [{text, anchors}], sources, replies, ignored}`. */
export function readMessage(message) {
  const content = Array.isArray(message?.content) ? message.content : [];
  const links = content
    .filter((block) => block?.type === "resource_link" && typeof block.uri === "string")
    .map((block, order) => ({ block, order, priority: priorityOf(block) }))
    .sort((a, b) => b.priority - a.priority || a.order - b.order)
    .map(({ block }) => block);
  const numbers = numbersOf(links);
  const sources = links.map((block, index) => ({
    ...block,
    number: numbers[index],
    webUrl: webUrlOf(block),
  }));
  const numberOf = new Map();
  for (const source of sources)
    if (!numberOf.has(source.uri)) numberOf.set(source.uri, source.number);
  let ignored = 0;
  const texts = content
    .filter((block) => block?.type === "text" && typeof block.text === "string")
    .map((block) => {
      const { anchors, rejected } = readAnchors(block, numberOf);
      ignored += rejected;
      return { text: block.text, anchors };
    });
  return { texts, sources, replies: readReplies(message), ignored };
}

/**
 * The web page a resource_link opens: its `_meta["citelab/url"]`, checked again here (the
 * message is untrusted, whoever validated it), or null when it is absent or not a URL the
 * front end links.
 */
export function webUrlOf(block) {
  const meta = block?._meta;
  const url = meta && typeof meta === "object" ? meta[SOURCE_URL_KEY] : undefined;
  return typeof url === "string" ? referenceHref({ url }) : null;
}

/**
 * The `[n]` of each source in list order: `_meta["citelab/number"]` when every link carries a
 * distinct integer ≥ 1 (conversation-wide numbering: a follow-up citing [1] and [3]), else
 * 1..k.
 */
function numbersOf(links) {
  const given = links.map((block) => {
    const meta = block._meta;
    return meta && typeof meta === "object" ? meta[SOURCE_NUMBER_KEY] : undefined;
  });
  const valid = given.every((number) => Number.isInteger(number) && number >= 1);
  if (links.length && valid && new Set(given).size === given.length) return given;
  return links.map((_, index) => index + 1);
}

function priorityOf(block) {
  const priority = block.annotations?.priority;
  return typeof priority === "number" && Number.isFinite(priority) ? priority : -1;
}

function readAnchors(block, numberOf) {
  const raw = block._meta?.[CITATIONS_KEY];
  if (!Array.isArray(raw)) return { anchors: [], rejected: 0 };
  const index = codePointIndex(block.text);
  const anchors = [];
  for (const anchor of raw) {
    const start = toUtf16(index, anchor?.startIndex);
    const end = toUtf16(index, anchor?.endIndex);
    const number = numberOf.get(anchor?.sourceUri);
    const holds =
      number !== undefined &&
      start >= 0 &&
      end > start &&
      block.text.slice(start, end) === anchor.citedText;
    if (holds) anchors.push({ start, end, number, order: anchors.length });
  }
  return { anchors, rejected: raw.length - anchors.length };
}

function readReplies(message) {
  const raw = message?._meta?.[SUGGESTED_REPLIES_KEY];
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
 */
export function readAnchorsOf(message, text, references) {
  const block = (Array.isArray(message?.content) ? message.content : []).find(
    (candidate) => candidate?.type === "text" && typeof candidate.text === "string",
  );
  if (!block || block.text !== text || !Array.isArray(references)) return [];
  const numberOf = new Map();
  for (const reference of references) {
    if (typeof reference?.uri === "string" && !numberOf.has(reference.uri))
      numberOf.set(reference.uri, Number(reference.number));
  }
  return readAnchors(block, numberOf).anchors;
}

/**
 * Whether a message's text block has any anchors at all (read them only then).
 * @param {unknown} message
 */
export function hasAnchors(message) {
  const blocks = Array.isArray(message?.content) ? message.content : [];
  return blocks.some((block) => block?._meta?.[CITATIONS_KEY]?.length > 0);
}
