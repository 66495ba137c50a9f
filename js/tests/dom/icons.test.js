import { describe, expect, test } from "vitest";
import { ICON_NAMES, icon } from "../../dom/icons.js";

describe("icons", () => {
  test("each call gives a new element, the same markup for the same name", () => {
    for (const name of ICON_NAMES) {
      const a = icon(document, name);
      const b = icon(document, name);
      expect(a).not.toBe(b);
      expect(a.outerHTML).toBe(b.outerHTML);
      expect(a.getAttribute("class")).toBe(`citelab-icon citelab-icon-${name}`);
      expect(a.getAttribute("aria-hidden")).toBe("true");
      expect(a.querySelectorAll("path").length).toBeGreaterThan(0);
    }
  });

  test("an icon changed after use leaves the next one alone", () => {
    const first = icon(document, "lock");
    first.setAttribute("class", "changed");
    first.querySelector("path").remove();
    const next = icon(document, "lock");
    expect(next.getAttribute("class")).toBe("citelab-icon citelab-icon-lock");
    expect(next.querySelectorAll("path")).toHaveLength(2);
  });

  test("an icon belongs to the document it was asked for", () => {
    const other = document.implementation.createHTMLDocument("");
    expect(icon(other, "stop").ownerDocument).toBe(other);
    expect(icon(document, "stop").ownerDocument).toBe(document);
  });

  test("an unknown name is an error", () => {
    expect(() => icon(document, "nope")).toThrow("unknown icon nope");
    expect(() => icon(document, "constructor")).toThrow("unknown icon constructor");
  });
});
