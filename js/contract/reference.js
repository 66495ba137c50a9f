// Reading a reference (one source as the chat's cards show it: `Reference` in model.js):
// its identity across turns, the URL it may link to, its label, passage and where it lives.
// Every field is untrusted; these only choose among them and check URLs (urls.js).
import { isAbsoluteAllowedUrl, isAllowedUrl, isFragmentUrl } from "./urls.js";

/** @typedef {import("./model.js").Reference} Reference */

/**
 * Identity of a source across turns: entity type + id, else URL, else label; null (never
 * matched) when it has none. Entity ids come first: two entities can share a URL or title.
 * @param {Partial<Reference>|null|undefined} reference
 * @returns {string|null}
 */
export function referenceKey(reference) {
  const { entity_type: type, entity_id: id, url, title } = reference ?? {};
  if (present(type) && present(id)) return `entity\u0000${type}\u0000${id}`;
  if (present(url)) return `url\u0000${url}`;
  if (present(title)) return `label\u0000${title}`;
  return null;
}

/** @param {unknown} value */
function present(value) {
  return (typeof value === "string" && value !== "") || typeof value === "number";
}

/**
 * The URL a card links to, or null when the reference has none that is safe to follow.
 * @param {{url?: unknown, uri?: unknown}|null|undefined} reference
 * @returns {string|null}
 */
export function referenceHref(reference) {
  // The web URL may be relative (a page of this site); the URI only as an absolute URL.
  const url = reference?.url;
  if (typeof url === "string" && url.trim() && isAllowedUrl(url) && !isFragmentUrl(url)) return url;
  const uri = reference?.uri;
  return typeof uri === "string" && isAbsoluteAllowedUrl(uri) ? uri : null;
}

/**
 * What a source is called: its title, else its name, else its URI.
 * @param {{title?: unknown, name?: unknown, uri?: unknown}} reference
 */
export function sourceLabel(reference) {
  const label = [reference.title, reference.name, reference.uri].find(
    (value) => typeof value === "string" && value.trim(),
  );
  return typeof label === "string" ? label : "Untitled source";
}

/**
 * The passage a card shows: the supporting passage when known, else the snippet.
 * @param {{passage?: unknown, snippet?: unknown}|null|undefined} reference
 */
export function passageOf(reference) {
  for (const value of [reference?.passage, reference?.snippet]) {
    if (typeof value === "string" && value.trim()) return value;
  }
  return "";
}

/**
 * The detail that tells same-title sources apart (e.g. the degree level "MSc"), or "".
 * @param {{detail?: unknown}} reference
 */
export function detailOf(reference) {
  return typeof reference.detail === "string" && reference.detail.trim() ? reference.detail : "";
}

/** @param {unknown} uri */
export function isEntityUri(uri) {
  return typeof uri === "string" && /^entity:[^/\s]+\/\S+$/.test(uri);
}

// Top-level domains reserved as never resolving (RFC 2606, RFC 6761): a link there is dead
// (the demo corpora's pages live under `.example`).
const RESERVED_HOST = /\.(example|test|invalid)\.?$/i;

/**
 * True when `url` is absolute http(s) on a reserved, never-answering host.
 * @param {string|null} url
 */
export function isDeadUrl(url) {
  try {
    const parsed = new URL(url ?? "");
    return /^https?:$/.test(parsed.protocol) && RESERVED_HOST.test(parsed.hostname);
  } catch {
    return false;
  }
}

/**
 * Where a source lives, as text: the domain of its web URL, else its URI.
 * @param {{url?: unknown, uri?: unknown}|null|undefined} reference
 */
export function whereOf(reference) {
  const href = referenceHref(reference);
  if (href) {
    try {
      const parsed = new URL(href);
      if (parsed.hostname) return parsed.hostname;
    } catch {
      // relative: fall through to the uri
    }
  }
  const uri = reference?.uri;
  return typeof uri === "string" && uri.trim() ? uri : "";
}
