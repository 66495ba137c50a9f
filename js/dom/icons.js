// Inline SVG icons (no emoji: those render as empty boxes where no emoji font is installed).
// Built with DOM calls from fixed path data, never from strings that could carry markup. An
// icon is decorative (aria-hidden): the control it sits in carries the text or label.

const SVG_NS = "http://www.w3.org/2000/svg";

// 24×24 outline paths (stroke = currentColor, so icons follow the text colour and contrast).
const PATHS = {
  lock: ["M7 11V8a5 5 0 0 1 10 0v3", "M5 11h14v10H5z"],
  copy: ["M9 9h11v11H9z", "M5 15H4V4h11v1"],
  stop: ["M7 7h10v10H7z"],
  plus: ["M12 5v14", "M5 12h14"],
  thumbUp: ["M7 11v9H4v-9z", "M7 11l4-8a2 2 0 0 1 3 2l-1 4h6a2 2 0 0 1 2 2l-2 7a2 2 0 0 1-2 2H7"],
  thumbDown: [
    "M7 13V4H4v9z",
    "M7 13l4 8a2 2 0 0 0 3-2l-1-4h6a2 2 0 0 0 2-2l-2-7a2 2 0 0 0-2-2H7",
  ],
  document: ["M6 3h8l4 4v14H6z", "M14 3v4h4", "M9 12h6", "M9 16h6"],
  warning: ["M12 3l10 18H2z", "M12 10v5", "M12 18v.5"],
  close: ["M6 6l12 12", "M18 6L6 18"],
  list: ["M4 7h16", "M4 12h16", "M4 17h10"],
};

/** @typedef {keyof typeof PATHS} IconName */

export const ICON_NAMES = Object.freeze(/** @type {IconName[]} */ (Object.keys(PATHS)));

// One prepared icon per document and name; each use is a deep clone of it (cloning is a
// fraction of the cost of building the element and its paths attribute by attribute, and
// the Sources cards need several icons each whenever a turn's list is drawn).
/** @type {WeakMap<Document, Map<string, SVGSVGElement>>} */
const TEMPLATES = new WeakMap(); // Document → Map(name → svg)

/**
 * A decorative 1em SVG icon by name.
 * @param {Document} doc
 * @param {IconName} name
 * @returns {SVGSVGElement}
 */
export function icon(doc, name) {
  let templates = TEMPLATES.get(doc);
  if (!templates) {
    templates = new Map();
    TEMPLATES.set(doc, templates);
  }
  let template = templates.get(name);
  if (!template) {
    template = buildIcon(doc, name);
    templates.set(name, template);
  }
  return /** @type {SVGSVGElement} */ (template.cloneNode(true));
}

/**
 * @param {Document} doc
 * @param {IconName} name
 */
function buildIcon(doc, name) {
  const paths = Object.hasOwn(PATHS, name) ? PATHS[name] : null;
  if (!paths) throw new Error(`unknown icon ${name}`);
  const svg = doc.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", `citelab-icon citelab-icon-${name}`);
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "1em");
  svg.setAttribute("height", "1em");
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "2");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  for (const d of paths) {
    const path = doc.createElementNS(SVG_NS, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

/**
 * A button with an icon and a visible text label.
 * @param {Document} doc
 * @param {IconName} name
 * @param {string} text
 * @param {string} className
 * @returns {HTMLButtonElement}
 */
export function iconButton(doc, name, text, className) {
  const button = doc.createElement("button");
  button.type = "button";
  if (className) button.className = className;
  const label = doc.createElement("span");
  label.textContent = text;
  button.append(icon(doc, name), label);
  return button;
}
