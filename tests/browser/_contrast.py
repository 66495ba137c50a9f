"""WCAG contrast of every piece of text on a page, from the browser's computed styles.

``CONTRAST`` is a function for ``page.evaluate(CONTRAST, selector)``: for each visible element
under ``selector`` that holds text of its own, it composites the background colours of the
element and its ancestors (alpha included, down to the page's canvas), and returns every pair
below the threshold: ``[{text, classes, color, background, ratio}]`` (empty when all pass).
Disabled controls are exempt (WCAG 1.4.3), and so is text hidden from everyone.
"""

from __future__ import annotations

__all__ = ["CONTRAST", "LUMINANCE"]

_HELPERS = r"""
const parse = (value) => {
  const m = /rgba?\(([^)]+)\)/.exec(value || "");
  if (!m) return null;
  const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
  return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
};
const over = (top, bottom) => {
  const a = top.a + bottom.a * (1 - top.a);
  const mix = (c) => (a === 0 ? 0 : (top[c] * top.a + bottom[c] * bottom.a * (1 - top.a)) / a);
  return { r: mix("r"), g: mix("g"), b: mix("b"), a };
};
const channel = (c) => {
  const v = c / 255;
  return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};
const luminance = ({ r, g, b }) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
const background = (node) => {
  const layers = [];
  for (let el = node; el; el = el.parentElement) {
    const bg = parse(getComputedStyle(el).backgroundColor);
    if (bg && bg.a > 0) layers.push(bg);
    if (bg && bg.a >= 1) break;
  }
  const canvas = parse(getComputedStyle(document.documentElement).backgroundColor);
  let color = canvas && canvas.a > 0 ? { ...canvas, a: 1 } : { r: 255, g: 255, b: 255, a: 1 };
  for (const layer of layers.reverse()) color = over(layer, color);
  return color;
};
"""

CONTRAST = (
    "([selector, threshold]) => {"
    + _HELPERS
    + r"""
  const failures = [];
  const checked = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll("*")]) {
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
      if (!own || el.closest("[hidden], [aria-hidden=true], svg")) continue;
      if (el.matches(":disabled") || el.closest(":disabled")) continue;
      const style = getComputedStyle(el);
      if (style.visibility === "hidden" || style.display === "none") continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const fg = parse(style.color);
      const bg = background(el);
      const color = over(fg, bg);
      const [hi, lo] = [luminance(color), luminance(bg)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      const entry = {
        text: el.textContent.trim().slice(0, 40),
        classes: String(el.className?.baseVal ?? el.className),
        color: style.color,
        background: `rgb(${Math.round(bg.r)}, ${Math.round(bg.g)}, ${Math.round(bg.b)})`,
        ratio: Math.round(ratio * 100) / 100,
      };
      checked.push(entry);
      if (ratio < threshold) failures.push(entry);
    }
  }
  return { failures, checked: checked.length };
}"""
)

LUMINANCE = (
    "(selector) => {"
    + _HELPERS
    + "const el = document.querySelector(selector); return luminance(background(el)); }"
)
