import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, test, vi } from "vitest";
import { mountAll, mountCaseBrowser } from "../../entries/report.js";
import { container } from "../helpers.js";
// Written by citelab: tests/evals/report/test_case_data.py checks that it is what a report
// writes now and that it holds to the schema in src/citelab/evals/report/_case_data.py.
import written from "./report_data.json";

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

  test("draws a long list a page at a time, appending the next page on demand", () => {
    const full = data();
    const many = Array.from({ length: 120 }, (_, i) => ({ ...full.cases[i % 2], c: `c${i}` }));
    const root = container();
    mountCaseBrowser(root, { ...full, cases: many });
    const rows = () => [...root.querySelectorAll(".citelab-case-row")];
    const count = root.querySelector(".citelab-case-count");
    const more = root.querySelector(".citelab-case-more");
    expect(rows()).toHaveLength(50);
    expect(count.textContent).toBe("120 of 120 turns match (showing the first 50)");
    const first = rows()[0];
    more.click();
    expect(rows()).toHaveLength(100);
    expect(rows()[0]).toBe(first); // appended, not redrawn
    expect(rows()[99].dataset.index).toBe("99");
    more.click();
    expect(rows()).toHaveLength(120);
    expect(more.hidden).toBe(true);
    expect(count.textContent).toBe("120 of 120 turns match");
    const select = root.querySelector("select[name=dataset]");
    select.value = "library";
    select.dispatchEvent(new Event("change"));
    expect(rows()).toHaveLength(50);
    expect(rows().every((row) => row.children[2].textContent === "library")).toBe(true);
    expect(count.textContent).toBe("60 of 120 turns match (showing the first 50)");
    expect(more.hidden).toBe(false);
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

  test("marks a unit by what is good for its metric, lower-is-better ones too", () => {
    const full = data();
    full.cases[0].r = {
      // Not dangling: good for a lower-is-better metric, whatever its hit says.
      dangling: [{ hit: false, number: 1, round: 1, at: 68 }],
      recall: [
        { hit: true, statement: 0, reason: "supported" },
        { hit: false, judgeable: false, statement: 1, reason: "no_passage" },
      ],
    };
    full.cases[1].r = { dangling: [{ hit: true, number: 4, round: 0, at: 3 }] };
    const root = container();
    const browser = mountCaseBrowser(root, full);
    browser.open(0);
    const row = (name) => root.querySelector(`tr[data-metric="${name}"]`);
    const lines = (name) => [...row(name).querySelectorAll(".citelab-case-reasons div")];
    expect(row("dangling").children[3].textContent).toBe("✔");
    const [clean] = lines("dangling");
    expect(clean.textContent).toBe("✔ number: 1; round: 1; at: 68");
    expect(clean.className).toBe("citelab-hit");
    const [supported, unjudged] = lines("recall");
    expect(supported.textContent.startsWith("✔")).toBe(true);
    expect(unjudged.textContent).toBe("– not judgeable: statement: 1; reason: no_passage");
    expect(unjudged.className).toBe("citelab-na");
    browser.open(1);
    expect(row("dangling").children[3].textContent).toBe("✘ missed");
    const [dangling] = lines("dangling");
    expect(dangling.textContent).toBe("✘ number: 4; round: 0; at: 3");
    expect(dangling.className).toBe("citelab-miss");
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

  describe("with packed details", () => {
    afterEach(() => vi.unstubAllGlobals());

    test("decompresses the opened turn's block, and only that block, once", async () => {
      const { list, lines } = split(data());
      const three = [...lines, lines[0]];
      const listed = { ...list, cases: [...list.cases, { ...list.cases[0], c: "c3" }] };
      const made = [];
      const Real = globalThis.DecompressionStream;
      vi.stubGlobal(
        "DecompressionStream",
        class extends Real {
          constructor(format) {
            super(format);
            made.push(format);
          }
        },
      );
      const root = container();
      const browser = mountCaseBrowser(root, listed, pack(three, 2), GZIP(2));
      expect(made).toEqual([]); // nothing is decompressed to draw the list
      const opening = browser.open(1);
      expect(root.querySelector(".citelab-case-detail").getAttribute("aria-busy")).toBe("true");
      await opening;
      expect(root.querySelector(".citelab-case-detail").hasAttribute("aria-busy")).toBe(false);
      expect(root.querySelector(".citelab-case-q").textContent).toBe(EVIL);
      expect(root.querySelector(".citelab-case-round pre").textContent).toBe(EVIL);
      await browser.open(0);
      expect(root.querySelector(".citelab-case-answer").textContent).toContain("Fees are due");
      expect(made).toEqual(["gzip"]); // turns 0 and 1 share a block
      await browser.open(2);
      expect(root.querySelector(".citelab-case-title").textContent).toContain("campus/c3");
      expect(made).toEqual(["gzip", "gzip"]);
    });

    test("shows the turn chosen last when an earlier one finishes later", async () => {
      const { list, lines } = split(data());
      const root = container();
      const browser = mountCaseBrowser(root, list, pack(lines, 1), GZIP(1));
      const first = browser.open(0);
      const second = browser.open(1);
      await Promise.all([first, second]);
      expect(root.querySelector(".citelab-case-q").textContent).toBe(EVIL);
      expect(root.querySelectorAll(".citelab-case-title")).toHaveLength(1);
    });

    test("says why a block cannot be read, and still shows what the list knows", async () => {
      const { list, lines } = split(data());
      const notGzip = Buffer.from("plain text").toString("base64");
      const root = container();
      const browser = mountCaseBrowser(root, list, `***\n${notGzip}`, GZIP(1));
      await browser.open(0);
      const error = () => root.querySelector(".citelab-case-error").textContent;
      expect(error()).toContain("could not be read (their block is not base64)");
      expect(root.querySelector(".citelab-case-q").textContent).toBe("When?");
      await browser.open(1);
      expect(error()).toContain("not valid gzip-compressed UTF-8");
      const other = container();
      const unknown = mountCaseBrowser(other, list, pack(lines, 1), { encoding: "zstd" });
      await unknown.open(0);
      expect(other.querySelector(".citelab-case-error").textContent).toContain(
        "unknown encoding zstd",
      );
    });

    test("says so in a browser without DecompressionStream", async () => {
      const { list, lines } = split(data());
      vi.stubGlobal("DecompressionStream", undefined);
      const root = container();
      await mountCaseBrowser(root, list, pack(lines, 1), GZIP(1)).open(0);
      expect(root.querySelector(".citelab-case-error").textContent).toContain(
        "no DecompressionStream",
      );
    });

    test("mounts from the page's scripts with their encoding and block size", async () => {
      const { list, lines } = split(data());
      const root = container();
      root.dataset.citelabCases = "packed-json";
      root.dataset.citelabCaseDetails = "packed-details";
      const json = document.createElement("script");
      json.type = "application/json";
      json.id = "packed-json";
      json.textContent = JSON.stringify(list);
      const details = document.createElement("script");
      details.type = "application/octet-stream";
      details.id = "packed-details";
      details.dataset.encoding = "gzip+base64";
      details.dataset.block = "2";
      details.textContent = pack(lines, 2);
      document.body.append(json, details);
      const browser = mountAll(document).find((b) => b.root === root);
      await browser.open(1);
      expect(root.querySelector(".citelab-case-q").textContent).toBe(EVIL);
      expect(root.querySelector(".citelab-case-sources")).not.toBeNull();
      json.remove();
      details.remove();
    });

    test("a turn opened before the page has its details waits for them", async () => {
      const { list, lines } = split(data());
      const root = container();
      root.dataset.citelabCases = "early-json";
      root.dataset.citelabCaseDetails = "early-details";
      const json = document.createElement("script");
      json.type = "application/json";
      json.id = "early-json";
      json.textContent = JSON.stringify(list);
      document.body.append(json);
      // The parser has read the list but not yet the details, at the page's end.
      vi.spyOn(document, "readyState", "get").mockReturnValue("loading");
      const browser = mountAll(document).find((b) => b.root === root);
      expect(root.querySelectorAll(".citelab-case-row")).toHaveLength(2);
      let shown = false;
      const opening = browser.open(1).then(() => {
        shown = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(shown).toBe(false);
      expect(root.querySelector(".citelab-case-detail").textContent).toContain("Opening");
      const details = document.createElement("script");
      details.type = "application/octet-stream";
      details.id = "early-details";
      details.dataset.encoding = "gzip+base64";
      details.dataset.block = "1";
      details.textContent = pack(lines, 1);
      document.body.append(details);
      vi.restoreAllMocks();
      document.dispatchEvent(new Event("DOMContentLoaded"));
      await opening;
      expect(root.querySelector(".citelab-case-q").textContent).toBe(EVIL);
      expect(root.querySelector(".citelab-case-error")).toBeNull();
      json.remove();
      details.remove();
    });

    test("says so when the page has no details script by the end", async () => {
      const { list } = split(data());
      const root = container();
      root.dataset.citelabCases = "lost-json";
      root.dataset.citelabCaseDetails = "lost-details";
      const json = document.createElement("script");
      json.type = "application/json";
      json.id = "lost-json";
      json.textContent = JSON.stringify(list);
      document.body.append(json);
      const browser = mountAll(document).find((b) => b.root === root);
      await browser.open(0);
      expect(root.querySelector(".citelab-case-error").textContent).toContain(
        "could not be read (the page has no element #lost-details holding them)",
      );
      json.remove();
    });
  });
});

const LIST_KEYS = ["v", "m", "d", "c", "t", "q", "e", "fail", "diff"];
const GZIP = (block) => ({ encoding: "gzip+base64", block });

/** The list's fields and one JSON line of details per entry, as the report writes them. */
function split(full) {
  return {
    list: {
      ...full,
      cases: full.cases.map((e) => Object.fromEntries(LIST_KEYS.map((k) => [k, e[k]]))),
    },
    lines: full.cases.map((e) =>
      JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !LIST_KEYS.includes(k)))),
    ),
  };
}

/** `lines` in gzip blocks of `block` lines, base64, one block a line. */
function pack(lines, block) {
  const blocks = [];
  for (let at = 0; at < lines.length; at += block)
    blocks.push(gzipSync(lines.slice(at, at + block).join("\n")).toString("base64"));
  return blocks.join("\n");
}

describe("a report's own data", () => {
  test("shows every turn, split and packed as the page stores it", async () => {
    const { list, lines } = split(written);
    const root = container();
    const browser = mountCaseBrowser(root, list, pack(lines, 5), GZIP(5));
    expect(root.querySelectorAll(".citelab-case-row")).toHaveLength(written.cases.length);
    for (const [i, entry] of written.cases.entries()) {
      await browser.open(i);
      expect(root.querySelector(".citelab-case-error")).toBeNull();
      expect(root.querySelector(".citelab-case-q").textContent).toBe(entry.q);
      const answer = entry.msg.content.find((block) => block.type === "text").text;
      expect(root.querySelector(".citelab-case-answer").textContent).toContain(
        answer.split(" [")[0],
      );
      const sources = root.querySelector(".citelab-case-sources");
      expect(sources.querySelectorAll("tr.citelab-cited")).toHaveLength(entry.cited.length);
      expect(sources.querySelectorAll("tr.citelab-uncited")).toHaveLength(
        entry.held.length - entry.cited.length,
      );
      const verdicts = root.querySelectorAll(".citelab-case-verdicts tr[data-metric]");
      expect([...verdicts].map((row) => row.dataset.metric)).toEqual(
        written.metrics.map((metric) => metric.name),
      );
      expect(root.querySelectorAll(".citelab-case-round")).toHaveLength(entry.rounds.length);
    }
    expect(root.querySelector("script")).toBeNull();
  });
});
