import { describe, expect, test } from "vitest";
import { mountAll, mountCaseBrowser } from "../report.js";
import { container } from "./helpers.js";

const EVIL = '<img src=x onerror="window.__hit=1">';

function data() {
  return {
    variants: [
      { name: "baseline", description: "as shipped", color: "#1f77b4" },
      { name: EVIL, description: EVIL, color: "red;background:url(http://x.test/)" },
    ],
    baseline: "baseline",
    metrics: [
      { name: "recall", higher: true },
      { name: "dangling", higher: false },
    ],
    sources: [["entity:page/fees", EVIL, "Fees are due in May."]],
    texts: ["a long statement that several scorers quote"],
    cases: [
      {
        v: 0, m: "m", d: "campus", c: "c1", t: 0, q: "When?", e: null,
        msg: { content: [{ type: "text", text: "Fees are due in May [1]." }] },
        held: [[1, 0]], cited: [[1, 0]], g: { expect: true, claims: [] },
        s: { recall: [1, 1, 1], dangling: [0, 0, 1] }, r: {}, rounds: [], fail: [], diff: false,
      },
      {
        v: 1, m: "m", d: "library", c: "c1", t: 0, q: EVIL, e: null,
        msg: { content: [{ type: "text", text: `${EVIL} [1]` }] },
        held: [[1, 0]], cited: [], g: {},
        s: { recall: [0, 0, 1], dangling: [1, 1, 1] },
        r: { recall: [{ hit: false, statement: [0], reason: EVIL }] },
        rounds: [{ text: EVIL, visible: [[1, 0]], searches: 1, added: [[1, 0]] }],
        fail: ["recall", "dangling"], diff: true,
      },
    ],
  };
}

describe("the case browser", () => {
  test("filters by variant, metric and difference from the baseline", () => {
    const root = container();
    mountCaseBrowser(root, data());
    const count = root.querySelector(".citelab-case-count");
    expect(count.textContent).toBe("2 of 2 turns match");
    const choose = (name, value) => {
      const select = root.querySelector(`select[name=${name}]`);
      select.value = value;
      select.dispatchEvent(new Event("change"));
    };
    choose("metric", "dangling");
    expect(count.textContent).toBe("1 of 2 turns match");
    choose("metric", "");
    choose("dataset", "campus");
    expect(root.querySelectorAll(".citelab-case-row")).toHaveLength(1);
    choose("dataset", "");
    const differs = root.querySelector("input[name=differs]");
    differs.checked = true;
    differs.dispatchEvent(new Event("change"));
    expect(count.textContent).toBe("1 of 2 turns match");
  });

  test("shows untrusted strings as text and keeps colours to #rrggbb", () => {
    const root = container();
    const browser = mountCaseBrowser(root, data());
    browser.open(1);
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector("[onerror]")).toBeNull();
    expect(globalThis.window.__hit).toBeUndefined();
    expect(root.querySelector(".citelab-case-q").textContent).toBe(EVIL);
    expect(root.querySelector(".citelab-case-round pre").textContent).toBe(EVIL);
    const reasons = root.querySelector('tr[data-metric="recall"] .citelab-case-reasons');
    expect(reasons.textContent).toContain("a long statement that several scorers quote");
    expect(reasons.textContent).toContain(EVIL);
    const swatches = [...root.querySelectorAll(".citelab-swatch")].map((s) => s.style.background);
    expect(swatches).not.toContain("red");
    expect(swatches.join(" ")).not.toContain("url");
    const dropped = root.querySelector(".citelab-case-sources tr.citelab-uncited");
    expect(dropped.textContent).toContain("dropped");
  });

  test("mounts from the JSON in the page and says when it cannot be read", () => {
    const root = container();
    root.dataset.citelabCases = "cases-json";
    const script = document.createElement("script");
    script.type = "application/json";
    script.id = "cases-json";
    script.textContent = JSON.stringify(data());
    document.body.append(script);
    expect(mountAll(document)).toHaveLength(1);
    expect(root.querySelectorAll(".citelab-case-row")).toHaveLength(2);
    script.textContent = "{not json";
    const other = container();
    other.dataset.citelabCases = "cases-json";
    root.removeAttribute("data-citelab-cases");
    expect(mountAll(document)).toHaveLength(0);
    expect(other.textContent).toContain("The case data could not be read");
    script.remove();
  });

  test("reads an opened turn's details from its own line, and only then", () => {
    const full = data();
    const listKeys = ["v", "m", "d", "c", "t", "q", "e", "fail", "diff"];
    const list = {
      ...full,
      cases: full.cases.map((e) => Object.fromEntries(listKeys.map((k) => [k, e[k]]))),
    };
    const lines = full.cases.map((e) =>
      JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !listKeys.includes(k)))),
    );
    const root = container();
    const browser = mountCaseBrowser(root, list, `${lines[0]}\n{broken`);
    browser.open(0);
    expect(root.querySelector(".citelab-case-answer").textContent).toContain("Fees are due");
    browser.open(1);
    expect(root.querySelector(".citelab-case-error").textContent).toContain(
      "could not be read",
    );
  });
});
