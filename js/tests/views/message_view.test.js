import { describe, expect, test } from "vitest";
import { readMessage } from "../../contract/message.js";
import { alignText, highlightAnchors } from "../../render/anchors.js";
import { renderMessage } from "../../views/message_view.js";
import { codePointIndex, codePointLength, toUtf16 } from "../../contract/offsets.js";
import { container } from "../helpers.js";

const CITATIONS = "drupal.org/ai.citations";
const REPLIES = "drupal.org/ai.suggested_replies";

// An anchor for `cited` inside `text`, with code point offsets as the contract defines them.
function anchor(text, cited, sourceUri, occurrence = 0) {
  let at = -1;
  for (let i = 0; i <= occurrence; i++) at = text.indexOf(cited, at + 1);
  const startIndex = codePointLength(text.slice(0, at));
  return { sourceUri, citedText: cited, startIndex, endIndex: startIndex + codePointLength(cited) };
}

function message(text, anchors, links, replies) {
  const textBlock = { type: "text", text };
  if (anchors) textBlock._meta = { [CITATIONS]: anchors };
  const result = { role: "assistant", content: [textBlock, ...links] };
  if (replies) result._meta = { [REPLIES]: replies };
  return result;
}

function link(uri, title, priority, extra = {}) {
  return {
    type: "resource_link",
    uri,
    name: title.toLowerCase(),
    title,
    annotations: { audience: ["user"], priority },
    ...extra,
  };
}

describe("offsets", () => {
  test("code points map to UTF-16 units across emoji and combining marks", () => {
    const text = "a😀e\u0301b👩‍🔬c";
    const index = codePointIndex(text);
    expect(index).toEqual([0, 1, 3, 4, 5, 6, 8, 9, 11, 12]);
    expect(toUtf16(index, 9)).toBe(text.length);
    expect(toUtf16(index, 10)).toBe(-1);
    expect(toUtf16(index, -1)).toBe(-1);
    expect(toUtf16(index, 1.5)).toBe(-1);
    expect(codePointLength(text)).toBe(9);
  });

  test("text without a surrogate pair (lone surrogates too) maps each code point to itself", () => {
    // What walking the string by code point gives, to compare the fast path with.
    const walked = (text) => {
      const units = [];
      let unit = 0;
      for (const character of text) {
        units.push(unit);
        unit += character.length;
      }
      return [...units, unit];
    };
    for (const text of ["", "plain e\u0301 text [1].", "lone \uD800 high, \uDC00 low", "é€✓"]) {
      expect(codePointIndex(text)).toEqual(walked(text));
      expect(codePointIndex(text)).toEqual([...Array(text.length + 1).keys()]);
    }
    const astral = "x😀y";
    expect(codePointIndex(astral)).toEqual(walked(astral));
  });
});

describe("reading a message", () => {
  test("sources in priority order, stable on ties; missing priority last", () => {
    const { sources } = readMessage(
      message("x", null, [
        link("u:a", "A", 0.5),
        link("u:b", "B", 1),
        link("u:c", "C", 0.5),
        { type: "resource_link", uri: "u:d", name: "d" },
        link("u:e", "E", 0.5),
      ]),
    );
    expect(sources.map((s) => [s.uri, s.number])).toEqual([
      ["u:b", 1],
      ["u:a", 2],
      ["u:c", 3],
      ["u:e", 4],
      ["u:d", 5],
    ]);
  });

  test("anchors that do not hold are ignored and counted", () => {
    const text = "Café 😀 opens at nine.";
    const good = anchor(text, "opens at nine", "u:a");
    const { texts, ignored } = readMessage(
      message(
        text,
        [
          good,
          { ...good, sourceUri: "u:unknown" },
          { ...good, citedText: "opens at ten" },
          { ...good, startIndex: good.startIndex + 1 }, // UTF-16 offsets would be off by one
          { ...good, endIndex: 999 },
          { ...good, startIndex: good.endIndex },
          "not an anchor",
        ],
        [link("u:a", "A", 1)],
      ),
    );
    expect(texts[0].anchors).toHaveLength(1);
    expect(ignored).toBe(6);
  });

  test("garbage is survivable", () => {
    for (const bad of [
      null,
      42,
      "x",
      {},
      { content: "x" },
      { content: [null, 1, { type: "text" }] },
    ]) {
      expect(readMessage(bad)).toMatchObject({ texts: [], sources: [], replies: [] });
    }
  });
});

describe("rendering a message", () => {
  const TEXT =
    "Paris 🗼 is the capital of France [1]. The Seine crosses it [2].\n\n- Café culture is **strong** [1]";
  // The same text without markers (a converted vendor answer): its spans get footnotes.
  const UNMARKED = TEXT.replace(/ \[\d\]/g, "");
  const LINKS = [
    link("entity:node/1", "Paris facts", 1, { description: "About Paris." }),
    link("https://example.org/seine", "The Seine", 0.5),
  ];

  test("cited spans are highlighted and followed by a footnote to their source", () => {
    const root = container();
    const anchors = [
      anchor(UNMARKED, "Paris 🗼 is the capital of France", "entity:node/1"),
      anchor(UNMARKED, "The Seine crosses it", "https://example.org/seine"),
      anchor(UNMARKED, "Café culture is **strong**", "entity:node/1"),
    ];
    const result = renderMessage(root, message(UNMARKED, anchors, LINKS));
    expect(result).toEqual({ placed: 3, ignored: 0 });
    const marks = [...root.querySelectorAll("mark.citelab-cited")];
    expect(marks.map((m) => m.textContent)).toEqual([
      "Paris 🗼 is the capital of France",
      "The Seine crosses it",
      "Café culture is ",
      "strong",
    ]);
    expect(marks.map((m) => m.dataset.sources)).toEqual(["1", "2", "1", "1"]);
    const footnotes = [...root.querySelectorAll(".citelab-footnote a")];
    expect(footnotes.map((a) => a.textContent)).toEqual(["1", "2", "1"]);
    const items = root.querySelectorAll(".citelab-sources li");
    expect(footnotes[1].getAttribute("href")).toBe(`#${items[1].id}`);
    // The footnote comes right after the span's last character.
    expect(marks[0].nextSibling).toBe(footnotes[0].parentElement);
    expect(root.querySelector("strong").textContent).toBe("strong");
    expect(root.querySelector("strong").nextSibling).toBe(footnotes[2].parentElement);
  });

  test("a footnote never lands inside a link", () => {
    const text = "See [the full guide](https://example.org/guide) for details.";
    const root = container();
    renderMessage(
      root,
      message(text, [anchor(text, "See [the full guide", "u:a")], [link("u:a", "A", 1)]),
    );
    const footnoteElement = root.querySelector(".citelab-footnote");
    expect(footnoteElement.closest("a")).toBeNull();
    expect(footnoteElement.previousSibling.getAttribute("href")).toBe("https://example.org/guide");
  });

  test("offsets are code points: emoji and combining marks before a span", () => {
    const text = "👩‍🔬 e\u0301 😀😀 — Cited part here [1].";
    const root = container();
    renderMessage(root, message(text, [anchor(text, "Cited part", "u:a")], [link("u:a", "A", 1)]));
    expect([...root.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["Cited part"]);
    // The same span with UTF-16 offsets (what a naive producer might send) does not hold.
    const wrong = { ...anchor(text, "Cited part", "u:a") };
    wrong.startIndex = text.indexOf("Cited part");
    wrong.endIndex = wrong.startIndex + 10;
    const other = container();
    expect(renderMessage(other, message(text, [wrong], [link("u:a", "A", 1)]))).toEqual({
      placed: 0,
      ignored: 1,
    });
    expect(other.querySelector("mark")).toBeNull();
  });

  test("an entity or escaped text inside a span still maps", () => {
    const text = "Fish &amp; chips \\*daily\\* [1].";
    const root = container();
    renderMessage(
      root,
      message(text, [anchor(text, "Fish &amp; chips \\*daily\\*", "u:a")], [link("u:a", "A", 1)]),
    );
    expect([...root.querySelectorAll("mark")].map((m) => m.textContent).join("")).toBe(
      "Fish & chips *daily*",
    );
  });

  test("hovering a source highlights the spans that cite it", () => {
    const root = container();
    const anchors = [
      anchor(TEXT, "The Seine crosses it", "https://example.org/seine"),
      anchor(TEXT, "capital of France", "entity:node/1"),
    ];
    renderMessage(root, message(TEXT, anchors, LINKS));
    const [paris, seine] = root.querySelectorAll(".citelab-sources li");
    seine.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    const active = () =>
      [...root.querySelectorAll(".citelab-cited-active")].map((m) => m.textContent);
    expect(active()).toEqual(["The Seine crosses it"]);
    seine.dispatchEvent(new MouseEvent("mouseout", { bubbles: true }));
    expect(active()).toEqual([]);
    paris.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
    expect(active()).toEqual(["capital of France"]);
  });

  test("without _meta the source list still shows; [n] links to the n-th source", () => {
    const root = container();
    renderMessage(root, message(TEXT, null, LINKS));
    const items = [...root.querySelectorAll(".citelab-sources li")];
    expect(items.map((li) => li.querySelector(".citelab-source-title").textContent)).toEqual([
      "Paris facts",
      "The Seine",
    ]);
    expect(items[0].querySelector("a")).toBeNull(); // entity: URIs are not followed
    expect(items[1].querySelector("a").getAttribute("href")).toBe("https://example.org/seine");
    expect(items[1].querySelector("a").getAttribute("rel")).toBe("noopener noreferrer");
    expect(items[0].querySelector(".citelab-source-snippet").textContent).toBe("About Paris.");
    const marker = root.querySelector('a[data-ref-index="2"]');
    expect(marker.getAttribute("href")).toBe(`#${items[1].id}`);
    expect(root.querySelector("mark")).toBeNull();
    expect(root.querySelector(".citelab-chips").hidden).toBe(true);
  });

  test("following a footnote focuses the source inside the view", () => {
    const root = container();
    renderMessage(
      root,
      message(
        UNMARKED,
        [anchor(UNMARKED, "The Seine crosses it", "https://example.org/seine")],
        LINKS,
      ),
    );
    root.querySelector(".citelab-footnote a").click();
    expect(document.activeElement).toBe(root.querySelectorAll(".citelab-sources li")[1]);
  });

  test("suggested replies are chips that send the message, or the label", () => {
    const root = container();
    const sent = [];
    renderMessage(
      root,
      message(
        "Hi.",
        null,
        [],
        [
          { label: "More", message: "Tell me more" },
          { label: "Thanks" },
          { label: " " },
          { nope: 1 },
        ],
      ),
      {
        onReply: (text) => sent.push(text),
      },
    );
    const chips = [...root.querySelectorAll(".citelab-chip")];
    expect(chips.map((c) => c.textContent)).toEqual(["More", "Thanks"]);
    for (const chip of chips) chip.click();
    expect(sent).toEqual(["Tell me more", "Thanks"]);
  });
});

// #24: the view showed a superscript number beside each `[n]` of the text, and a list
// without numbers in which two "Data Science" programmes looked the same.
describe("a message whose text has its own markers", () => {
  const TEXT_WITH_MARKERS =
    "The MSc takes four semesters [1]. The fee is 312 euros [2]. The BSc starts with algebra [3].";
  const SAME_TITLE = [
    link("entity:program/ds-msc", "Data Science", 1, {
      _meta: { "citelab/url": "https://uni.example/ds-msc" },
    }),
    link("entity:page/fee", "Semester fee", 0.66),
    link("entity:program/ds-bsc", "Data Science", 0.33),
  ];
  const ANCHORS = [
    anchor(TEXT_WITH_MARKERS, "The MSc takes four semesters", "entity:program/ds-msc"),
    anchor(TEXT_WITH_MARKERS, "The fee is 312 euros", "entity:page/fee"),
    anchor(TEXT_WITH_MARKERS, "The BSc starts with algebra", "entity:program/ds-bsc"),
  ];

  test("each marker shows once: no footnote beside a [n] the text already has", () => {
    const root = container();
    const result = renderMessage(root, message(TEXT_WITH_MARKERS, ANCHORS, SAME_TITLE));
    expect(result).toEqual({ placed: 3, ignored: 0 });
    expect(root.querySelectorAll("mark.citelab-cited")).toHaveLength(3);
    expect(root.querySelectorAll(".citelab-footnote")).toHaveLength(0);
    expect(root.querySelector(".citelab-answer").textContent.trim()).toBe(TEXT_WITH_MARKERS);
  });

  test("an anchor whose number has no marker in the text still gets its footnote", () => {
    const text = "The MSc takes four semesters [1]. The fee is 312 euros.";
    const anchors = [
      anchor(text, "The MSc takes four semesters", "entity:program/ds-msc"),
      anchor(text, "The fee is 312 euros", "entity:page/fee"),
    ];
    const root = container();
    renderMessage(root, message(text, anchors, SAME_TITLE));
    const footnotes = [...root.querySelectorAll(".citelab-footnote a")];
    expect(footnotes.map((a) => a.textContent)).toEqual(["2"]);
  });

  test("the list is numbered as the text is, and same-title sources are told apart", () => {
    const root = container();
    renderMessage(root, message(TEXT_WITH_MARKERS, ANCHORS, SAME_TITLE));
    const items = [...root.querySelectorAll(".citelab-sources li")];
    expect(items.map((item) => item.querySelector(".citelab-source-number")?.textContent)).toEqual(
      ["[1]", "[2]", "[3]"],
    );
    const rows = items.map((item) => item.textContent);
    expect(new Set(rows).size).toBe(3);
    expect(rows[2]).toContain("entity:program/ds-bsc");
    expect(rows[1]).not.toContain("entity:page/fee"); // a unique title needs no more
  });

  test("conversation-wide numbers (citelab/number) are the numbers shown and linked", () => {
    const text = "Fees [1]. Deadline [3].";
    const links = [
      link("entity:page/fee", "Semester fee", 1, { _meta: { "citelab/number": 1 } }),
      link("entity:page/deadline", "Deadlines", 0.5, { _meta: { "citelab/number": 3 } }),
    ];
    const root = container();
    renderMessage(root, message(text, null, links));
    const items = [...root.querySelectorAll(".citelab-sources li")];
    expect(items.map((item) => item.querySelector(".citelab-source-number").textContent)).toEqual([
      "[1]",
      "[3]",
    ]);
    const markers = [...root.querySelectorAll("a[data-ref-index]")];
    expect(markers.map((a) => a.getAttribute("href"))).toEqual([`#${items[0].id}`, `#${items[1].id}`]);
    expect(readMessage(message(text, null, links)).sources.map((s) => s.number)).toEqual([1, 3]);
  });
});

describe("aligning rendered text with its source", () => {
  test("every rendered character of plain text finds its place", () => {
    const source =
      "# Title\n\nSome *emphasis* and a [link](https://example.org/very/long/url/that/is/long) then more.";
    const root = container();
    root.innerHTML =
      '<h1>Title</h1>\n<p>Some <em>emphasis</em> and a <a href="#">link</a> then more.</p>';
    for (const { node, positions } of alignText(root, source)) {
      positions.forEach((position, k) => expect(source[position]).toBe(node.data[k]));
      expect([...positions].every((p) => p >= 0)).toBe(true);
    }
  });
});

describe('a source\'s web page (_meta["citelab/url"])', () => {
  const URL_KEY = "citelab/url";

  function renderSource(uri, meta) {
    const root = container();
    const source = link(uri, "Fees", 1, meta === undefined ? {} : { _meta: meta });
    renderMessage(root, message("Fees are due in May [1].", null, [source]));
    return root.querySelector(".citelab-source");
  }

  test("links to the web page in a new tab and shows the uri after the link", () => {
    const item = renderSource("entity:node/5", { [URL_KEY]: "https://uni.example/fees" });
    const title = item.querySelector("a.citelab-source-title");
    expect(title.getAttribute("href")).toBe("https://uni.example/fees");
    expect(title.getAttribute("target")).toBe("_blank");
    expect(title.getAttribute("rel")).toBe("noopener noreferrer");
    expect(title.textContent).toBe("Fees");
    expect(item.querySelector("code.citelab-source-uri").textContent).toBe("entity:node/5");
    expect(title.nextElementSibling).toBe(item.querySelector("code"));
  });

  test("a relative web page is linked too", () => {
    const item = renderSource("entity:node/5", { [URL_KEY]: "/fees?lang=en" });
    expect(item.querySelector("a").getAttribute("href")).toBe("/fees?lang=en");
  });

  test("the same URL as the uri shows no second copy of it", () => {
    const item = renderSource("https://uni.example/fees", { [URL_KEY]: "https://uni.example/fees" });
    expect(item.querySelector("a").getAttribute("href")).toBe("https://uni.example/fees");
    expect(item.querySelector("code")).toBeNull();
  });

  test.each([
    ["javascript:", "javascript:alert(1)"],
    ["javascript: in capitals", "JavaScript:alert(1)"],
    ["data:", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="],
    ["vbscript:", "vbscript:msgbox(1)"],
    ["a tab inside the scheme", "java\tscript:alert(1)"],
    ["a newline inside the scheme", "java\nscript:alert(1)"],
    ["leading spaces and controls", " \u0000\u001f javascript:alert(1)"],
    ["a no-break space before it", "\u00a0javascript:alert(1)"],
    ["only whitespace", "   "],
    ["empty", ""],
    ["a fragment", "#top"],
    ["a number", 42],
    ["an object", { href: "https://uni.example/fees" }],
    ["an array", ["https://uni.example/fees"]],
    ["null", null],
  ])("%s: falls back to the uri", (_name, url) => {
    for (const [uri, href] of [
      ["entity:node/5", null],
      ["https://uni.example/node/5", "https://uni.example/node/5"],
    ]) {
      const item = renderSource(uri, { [URL_KEY]: url });
      const title = item.querySelector(".citelab-source-title");
      expect(title.getAttribute("href")).toBe(href);
      expect(item.querySelector("code")).toBeNull();
      for (const node of item.querySelectorAll("[href]")) {
        expect(node.getAttribute("href")).not.toMatch(/script|data:/i);
      }
    }
  });

  test.each([
    ["absent", undefined],
    ["a string", "https://uni.example/fees"],
    ["null", null],
    ["an array", [{ [URL_KEY]: "https://uni.example/fees" }]],
  ])("_meta %s: falls back to the uri", (_name, meta) => {
    const item = renderSource("https://uni.example/node/5", meta);
    expect(item.querySelector("a").getAttribute("href")).toBe("https://uni.example/node/5");
    expect(item.querySelector("code")).toBeNull();
  });

  test("an entity is never decoded: it stays a relative URL on the page's own scheme", () => {
    const item = renderSource("entity:node/5", { [URL_KEY]: "javascript&colon;alert(1)" });
    const href = item.querySelector("a").getAttribute("href");
    expect(href).toBe("javascript&colon;alert(1)");
    expect(new URL(href, "https://uni.example/page").protocol).toBe("https:");
  });

  test("a hostile uri shown next to a safe web page stays text", () => {
    const uri = '"><img src=x onerror=alert(1)>';
    const item = renderSource(uri, { [URL_KEY]: "https://uni.example/fees" });
    expect(item.querySelector("code").textContent).toBe(uri);
    expect(item.querySelector("img")).toBeNull();
  });
});

describe("cited-span marks", () => {
  // Every character of the rendered text is marked with exactly the anchors whose source
  // range holds it, for overlapping, nested and touching anchors (a seeded random sample).
  test("each character carries the anchors that cover it, however they overlap", () => {
    const source = "Alpha beta **gamma** delta [1]. Epsilon `zeta` eta [2].\n\nTheta iota kappa [3].";
    const html =
      "<p>Alpha beta <strong>gamma</strong> delta [1]. Epsilon <code>zeta</code> eta [2].</p>" +
      "<p>Theta iota kappa [3].</p>";
    let seed = 7;
    const next = (n) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let round = 0; round < 40; round++) {
      const anchors = Array.from({ length: 1 + next(6) }, (_, order) => {
        const start = next(source.length - 1);
        const end = Math.min(source.length, start + 1 + next(30));
        return { start, end, number: 1 + next(3), order };
      });
      const root = container();
      root.innerHTML = html;
      const expected = [];
      for (const { node, positions } of alignText(root, source)) {
        positions.forEach((position, k) => {
          const covering = anchors.filter((a) => position >= a.start && position < a.end);
          expected.push([node.data[k], position < 0 ? "" : covering.map((a) => a.order).join(" ")]);
        });
      }
      highlightAnchors(root, source, anchors, null);
      const seen = [];
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const mark = node.parentElement.closest("mark.citelab-cited");
        for (const character of node.data) seen.push([character, mark?.dataset.anchors ?? ""]);
      }
      expect(seen).toEqual(expected);
    }
  });
});
