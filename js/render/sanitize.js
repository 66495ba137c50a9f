// The second, independent layer: DOMPurify with the allowlists in allowlists.json (the same
// lists the Python renderer gives nh3). markdown-it already escapes raw HTML; this catches
// whatever a renderer bug or a plugin might still let through.
import DOMPurify from "dompurify";
import ALLOWLISTS from "../contract/allowlists.json";
import { allowedUriRegExp, isAllowedUrl, isFragmentUrl } from "../contract/urls.js";

const PER_TAG = new Map(Object.entries(ALLOWLISTS.attributes).map(([t, a]) => [t, new Set(a)]));
/** @type {Record<string, Record<string, string[]>>} */
const PER_VALUE = ALLOWLISTS.attribute_values;
// Whole-value patterns (id, class…): the same ASCII expressions nh3's filter uses in Python.
const PER_PATTERN = new Map(
  Object.entries(ALLOWLISTS.attribute_patterns).map(([tag, byName]) => [
    tag,
    new Map(Object.entries(byName).map(([name, p]) => [name, new RegExp(`^(?:${p})$`)])),
  ]),
);
const ALL_ATTRIBUTES = [
  ...new Set([
    ...Object.values(ALLOWLISTS.attributes).flat(),
    ...Object.values(PER_VALUE).flatMap((byName) => Object.keys(byName)),
  ]),
].sort();

/** The DOMPurify configuration, exported so tests can check it is explicit. */
export const PURIFY_CONFIG = Object.freeze({
  ALLOWED_TAGS: [...ALLOWLISTS.tags],
  ALLOWED_ATTR: ALL_ATTRIBUTES,
  ALLOWED_URI_REGEXP: allowedUriRegExp(),
  FORBID_CONTENTS: [...ALLOWLISTS.drop_content_tags],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  ALLOW_SELF_CLOSE_IN_ATTR: false,
  KEEP_CONTENT: true,
});

/** @type {import("dompurify").DOMPurify|null} */
let instance = null;

function purifier() {
  if (instance) return instance;
  // A private instance: our hooks must not change a DOMPurify the host page also uses.
  instance = DOMPurify(globalThis.window);
  // Parsing the configuration is a fixed cost per call; set it once (streaming calls this
  // for every changed block on every frame).
  instance.setConfig({ ...PURIFY_CONFIG, RETURN_DOM_FRAGMENT: true });
  instance.addHook("uponSanitizeAttribute", keepAllowedAttribute);
  instance.addHook("afterSanitizeAttributes", finishLink);
  return instance;
}

// DOMPurify's ALLOWED_ATTR is one global list; the allowlists are per tag (and per value).
/**
 * @type {import("dompurify").UponSanitizeAttributeHook}
 */
function keepAllowedAttribute(node, data) {
  const tag = node.nodeName.toLowerCase();
  const values = PER_VALUE[tag]?.[data.attrName];
  if (values) {
    data.keepAttr = values.includes(data.attrValue);
  } else if (!PER_TAG.get(tag)?.has(data.attrName)) {
    data.keepAttr = false;
  } else if (data.attrName === "href" && !isAllowedUrl(data.attrValue)) {
    data.keepAttr = false;
  } else if (PER_PATTERN.get(tag)?.get(data.attrName)?.test(data.attrValue) === false) {
    data.keepAttr = false;
  }
}

// Every link gets the allowlists' rel; a link that leaves the page opens in a new tab, so
// following it never navigates the notebook or the answer page away.
/**
 * @param {Element} node
 */
function finishLink(node) {
  if (node.nodeName.toLowerCase() !== "a") return;
  node.setAttribute("rel", ALLOWLISTS.link_rel); // on every link, as nh3 writes it
  const href = node.getAttribute("href");
  if (href === null) {
    node.removeAttribute("target");
    return;
  }
  if (isFragmentUrl(href)) node.removeAttribute("target");
  else node.setAttribute("target", "_blank");
}

/**
 * Sanitize an HTML string into a DocumentFragment of the current document.
 * @param {string} html
 */
export function sanitizeToFragment(html) {
  return asFragment(purifier().sanitize(html));
}

/**
 * What sanitize returns under our configuration (RETURN_DOM_FRAGMENT, set once with
 * setConfig, which DOMPurify's types cannot follow: they type a call without a config as a
 * string).
 * @param {unknown} result
 */
function asFragment(result) {
  return /** @type {DocumentFragment} */ (result);
}

/**
 * Sanitize one block's HTML: `{fragment, untouched}`, where `untouched` says the sanitizer
 * removed nothing (no element, no attribute), so the fragment is exactly what the HTML parses
 * to, plus the link attributes every link gets. Streaming relies on it (see append.js).
 * @param {string} html
 * @returns {{fragment: DocumentFragment, untouched: boolean}}
 */
export function sanitizeBlock(html) {
  const instance = purifier();
  const fragment = asFragment(instance.sanitize(html));
  return { fragment, untouched: instance.removed.every(isWalkRoot) };
}

// DOMPurify parses a string into a new document and walks from its <body>, which it then
// lists as removed (its children are what it returns). Any other entry is a real removal.
/**
 * @param {import("dompurify").RemovedElement|import("dompurify").RemovedAttribute} entry
 */
function isWalkRoot(entry) {
  return "element" in entry && entry.element?.nodeName === "BODY";
}

/**
 * Sanitize an HTML string into an HTML string.
 * @param {string} html
 */
export function sanitizeToString(html) {
  const box = globalThis.document.createElement("div");
  box.append(sanitizeToFragment(html));
  return box.innerHTML;
}
