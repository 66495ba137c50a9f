import { describe, expect, test } from "vitest";
import ALLOWLISTS from "../../contract/allowlists.json";
import { createMarkdown, markdownToHtml, renderBlocks } from "../../render/markdown.js";
import { PURIFY_CONFIG, sanitizeToString } from "../../render/sanitize.js";
import { isAllowedUrl } from "../../contract/urls.js";

describe("block grouping", () => {
  test("each top-level construct is one block", () => {
    const text = [
      "# Title",
      "Intro paragraph.",
      "",
      "- one",
      "- two",
      "",
      "| a | b |",
      "|---|---|",
      "| 1 | 2 |",
      "",
      "```py",
      "x = 1",
      "",
      "y = 2",
      "```",
      "",
      "Closing.",
    ].join("\n");
    const blocks = renderBlocks(text);
    expect(blocks.map((html) => /^<(\w+)/.exec(html)[1])).toEqual([
      "h1",
      "p",
      "ul",
      "table",
      "pre",
      "p",
    ]);
    expect(blocks.join("")).toBe(createMarkdownWithTightLists(text));
  });

  test("reference definitions make no block", () => {
    expect(renderBlocks("[a]: https://example.org\n\nSee [a].")).toEqual([
      '<p>See <a href="https://example.org">a</a>.</p>\n',
    ]);
  });
});

// What the whole document renders to with one markdown-it call (blocks must join to it).
function createMarkdownWithTightLists(text) {
  const md = createMarkdown();
  return md.render(text, { references: Object.create(null) });
}

describe("lists render tight", () => {
  test("a loose list has no paragraphs in its items", () => {
    const [html] = renderBlocks("- a\n\n- b\n\n- c");
    expect(html).toBe("<ul>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n</ul>\n");
  });

  test("two paragraphs in one item keep a line break, not run together", () => {
    const [html] = renderBlocks("1. first\n\n   second\n2. next");
    expect(html).toContain("<li>first<br>\nsecond</li>");
  });

  test("nested lists stay tight", () => {
    const [html] = renderBlocks("- a\n\n  - b\n\n  - c\n- d");
    expect(html).not.toContain("<p>");
  });
});

describe("tables", () => {
  test("alignment becomes data-align, no style survives", () => {
    const [html] = renderBlocks("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |");
    expect(html).toContain('<th data-align="left">a</th>');
    expect(html).toContain('<td data-align="center">2</td>');
    expect(html).toContain('<td data-align="right">3</td>');
    expect(html).not.toContain("style");
    expect(sanitizeToString(html)).toContain('<td data-align="right">3</td>');
  });
});

describe("first layer: markdown-it", () => {
  test("raw HTML is escaped to inert text", () => {
    const [html] = renderBlocks('<script>alert(1)</script> <img src=x onerror="alert(1)">');
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toContain("<img");
  });

  test.each([
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "entity:node/5",
  ])("a %s link is not a link", (url) => {
    const [html] = renderBlocks(`[click](${url})`);
    expect(html).not.toContain("<a");
  });

  test.each([
    ["https://example.org/a?b=1", "https://example.org/a?b=1"],
    ["http://example.org", "http://example.org"],
    ["mailto:someone@example.org", "mailto:someone@example.org"],
    ["/relative/path", "/relative/path"],
    ["../up", "../up"],
    ["#fragment", "#fragment"],
  ])("a %s link is kept", (url, href) => {
    const [html] = renderBlocks(`[click](${url})`);
    expect(html).toContain(`<a href="${href}">click</a>`);
  });

  test("links that leave the page open in a new tab after sanitizing", () => {
    const html = markdownToHtml("[out](https://example.org) and [in](#here)");
    expect(html).toContain(
      '<a href="https://example.org" rel="noopener noreferrer" target="_blank">out</a>',
    );
    expect(html).toContain('<a href="#here" rel="noopener noreferrer">in</a>');
  });
});

describe("second layer: DOMPurify alone", () => {
  test("the configuration is an explicit allowlist", () => {
    expect(PURIFY_CONFIG.ALLOW_DATA_ATTR).toBe(false);
    expect(PURIFY_CONFIG.ALLOW_ARIA_ATTR).toBe(false);
    expect(PURIFY_CONFIG.ALLOWED_TAGS).toEqual(ALLOWLISTS.tags);
    expect(PURIFY_CONFIG.ALLOWED_ATTR).not.toContain("style");
    expect(PURIFY_CONFIG.ALLOWED_ATTR).not.toContain("src");
  });

  test("the tag allowlist is the contract's list", () => {
    expect([...ALLOWLISTS.tags].sort()).toEqual(
      [
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p",
        "br",
        "strong",
        "em",
        "code",
        "pre",
        "ul",
        "ol",
        "li",
        "a",
      ]
        .concat(["table", "thead", "tbody", "tr", "th", "td"])
        .sort(),
    );
    expect(ALLOWLISTS.url_schemes).toEqual(["http", "https", "mailto"]);
  });

  test.each([
    ['<a href="javascript:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ['<a href=" jav&#x09;ascript:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ['<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ['<a href="entity:node/5">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ['<p onclick="alert(1)" style="color:red" data-x="1" aria-label="a">x</p>', "<p>x</p>"],
    ['<p data-align="left">x</p>', "<p>x</p>"],
    ['<td data-align="left">x</td>', "x"],
    ["<script>alert(1)</script>ok", "ok"],
    ["<svg><g onload=alert(1)></g></svg>x", "x"],
    ["<blockquote>q</blockquote>", "q"],
    [
      '<a href="/x" target="_self">x</a>',
      '<a href="/x" rel="noopener noreferrer" target="_blank">x</a>',
    ],
    [
      '<a href="/x" rel="opener">x</a>',
      '<a href="/x" rel="noopener noreferrer" target="_blank">x</a>',
    ],
    [
      '<ol start="3" reversed><li id="a" title="t">x</li></ol>',
      '<ol start="3"><li>x</li></ol>',
    ],
    // id and class only with the values the renderers write (as nh3's filter in Python)
    [
      '<ol class="x"><li id="cite-t1-3" class="citelab-source" lang="en">x</li></ol>',
      '<ol><li id="cite-t1-3" class="citelab-source">x</li></ol>',
    ],
    ['<code class="language-py">x</code>', '<code class="language-py">x</code>'],
    ['<code class="language-py evil">x</code>', "<code>x</code>"],
    ['<a class="citation" title="t" href="#cite-t-1">1</a>', '<a class="citation" href="#cite-t-1" rel="noopener noreferrer">1</a>'],
    ['<a class="citation x">1</a>', '<a rel="noopener noreferrer">1</a>'],
    ['<a href="\u2028javascript:alert(1)">x</a>', '<a rel="noopener noreferrer">x</a>'],
    ["x<noscript><p>inside</p></noscript>ok", "xok"],
  ])("%s → %s", (input, output) => {
    expect(sanitizeToString(input)).toBe(output);
  });
});

describe("URL rule", () => {
  test.each([
    ["https://x.org", true],
    ["mailto:a@b.c", true],
    ["page.html", true],
    ["//cdn.example.org/x", true],
    ["#top", true],
    ["java\nscript:alert(1)", false],
    ["\u0000javascript:alert(1)", false],
    [" javascript:alert(1)", false],
    ["JaVaScRiPt:alert(1)", false],
    ["tel:123", false],
    ["entity:node/1", false],
    [42, false],
  ])("%j allowed: %s", (url, allowed) => {
    expect(isAllowedUrl(url)).toBe(allowed);
  });
});

describe("links that look like citation markers", () => {
  test.each([
    ["[1](https://evil.example/x)", '<a href="https://evil.example/x" rel="noopener noreferrer" target="_blank">1 (evil.example)</a>'],
    ["[[1]](https://evil.example)", '<a href="https://evil.example" rel="noopener noreferrer" target="_blank">[1] (evil.example)</a>'],
    ["[2, 3](/local)", '<a href="/local" rel="noopener noreferrer" target="_blank">2, 3 (/local)</a>'],
    ["[`1`](https://u:p@evil.example:8080/)", '<a href="https://u:p@evil.example:8080/" rel="noopener noreferrer" target="_blank"><code>1</code> (evil.example:8080)</a>'],
  ])("%s shows where it goes", (source, link) => {
    expect(markdownToHtml(source)).toBe(`<p>${link}</p>\n`);
  });

  test("ordinary links and real markers are left alone", () => {
    const html = markdownToHtml("See [the fees](https://a.example) [1].", { turn: "t" });
    expect(html).toContain('target="_blank">the fees</a>');
    expect(html).toContain('[<a href="#cite-t-1" data-ref-turn="t" data-ref-index="1"');
    expect(html).not.toContain("(a.example)");
  });

  test('a title is never kept: [t](http://x " [@a](/a) ")', () => {
    const html = markdownToHtml('[text](http://x.example " [@a](/a) ")');
    expect(html).not.toContain("title");
    expect(html).toContain('<a href="http://x.example"');
  });
});
