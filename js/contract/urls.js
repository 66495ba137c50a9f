// Which URLs may become links: the one rule shared by markdown-it's link validation, the
// source cards, the message view and (as a regular expression) DOMPurify's URI allowlist.
import ALLOWLISTS from "./allowlists.json";

const SCHEMES = new Set(ALLOWLISTS.url_schemes);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
// Browsers drop ASCII tab/newline anywhere in a URL and trim C0 controls and spaces at both
// ends, so "java\tscript:" would run as javascript:. We drop every control and space
// everywhere before looking at the scheme: stricter than the browser, never looser (the same
// class as the Python renderer's, from the allowlists).
const IGNORED = new RegExp(ALLOWLISTS.url_ignored, "g");

/**
 * True when `url` is http(s), mailto, or (if the allowlists allow it) relative/fragment.
 * @param {unknown} url
 * @returns {boolean}
 */
export function isAllowedUrl(url) {
  if (typeof url !== "string") return false;
  const match = SCHEME.exec(url.replace(IGNORED, ""));
  if (!match) return ALLOWLISTS.allow_relative_urls === true;
  return SCHEMES.has(match[1].toLowerCase());
}

/**
 * True when a source's identity (its `uri`) may be its link: an absolute URL with an allowed
 * scheme only, as in the Python renderer. A relative `uri` ("/logout") names a thing, not a
 * page of this site, so it is shown as text, never made a same-origin link.
 * @param {unknown} url
 * @returns {boolean}
 */
export function isAbsoluteAllowedUrl(url) {
  if (typeof url !== "string") return false;
  const match = SCHEME.exec(url.replace(IGNORED, ""));
  return match !== null && SCHEMES.has(match[1].toLowerCase());
}

/**
 * True for a link that stays on the page (`#…`).
 * @param {unknown} url
 * @returns {boolean}
 */
export function isFragmentUrl(url) {
  return typeof url === "string" && url.replace(IGNORED, "").startsWith("#");
}

/** DOMPurify's independent second layer: the same schemes as a regular expression. */
export function allowedUriRegExp() {
  const schemes = [...SCHEMES].map((s) => s.replace(/[.+-]/g, "\\$&")).join("|");
  // Allowed scheme; or anything that cannot start a scheme (relative, fragment, //host);
  // or letters followed by a character that ends a would-be scheme before any ':'.
  const relative = ALLOWLISTS.allow_relative_urls
    ? "|[^a-z]|[a-z][a-z0-9+.\\-]*(?:[^a-z0-9+.\\-:]|$)"
    : "";
  return new RegExp(`^(?:(?:${schemes}):${relative})`, "i");
}
