// Small pieces the case list and the case view both draw.
import { element } from "../dom/nodes.js";

/**
 * A colour dot (a variant's colour); only a #rrggbb colour reaches the style.
 * @param {Document} doc
 * @param {unknown} color
 */
export function swatch(doc, color) {
  const dot = element(doc, "span", "citelab-swatch");
  // Only a #rrggbb colour reaches the style (the data is untrusted).
  if (typeof color === "string" && /^#[0-9a-fA-F]{6}$/.test(color)) dot.style.background = color;
  dot.setAttribute("aria-hidden", "true");
  return dot;
}

/**
 * `text` cut to `length` characters, with an ellipsis when cut.
 * @param {string} text
 * @param {number} length
 */
export function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
