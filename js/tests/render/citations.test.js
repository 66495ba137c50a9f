import { describe, expect, test } from "vitest";
import { MAX_GROUP_NUMBERS, parseMarkerGroup } from "../../render/citations.js";
import { renderBlocks } from "../../render/markdown.js";

// The numbers each marker links, in order, from rendered HTML.
function linked(text) {
  const html = renderBlocks(text, { turn: "t1" }).join("");
  return [...html.matchAll(/data-ref-index="(\d+)"/g)].map((m) => Number(m[1]));
}

describe("marker grammar", () => {
  test.each([
    ["One [3].", [3]],
    ["Two groups [1][3].", [1, 3]],
    ["A list [1, 3] and [1,3].", [1, 3, 1, 3]],
    ["A range [2-4] and [2–4].", [2, 4, 2, 4]],
    ["An image label needs a link after it: great![1].", [1]],
    [`A group of the most numbers [1-${MAX_GROUP_NUMBERS}].`, [1, MAX_GROUP_NUMBERS]],
    ["In a heading and a list:\n\n# H [1]\n\n- item [2]", [1, 2]],
    ["In a table:\n\n| a |\n|---|\n| x [5] |", [5]],
    ["Zero is a marker that links nothing [0].", [0]],
    ["A chain [1][2] and one after a bracket (see [3]) and an escaped one \\[x\\][4].", [1, 2, 3, 4]],
  ])("%j links %j", (text, numbers) => {
    expect(linked(text)).toEqual(numbers);
  });

  test.each([
    ["Inline code `[1]`."],
    ["```\n[1]\n```"],
    ["    [1] indented code"],
    ["A link [1](https://example.org)."],
    ["A reference link [1][ref].\n\n[ref]: https://example.org"],
    ["A collapsed reference [1][]."],
    ["A footnote [^1]."],
    ["An image ![1](x.png)."],
    ["Spaces in a range [2 - 4]."],
    ["A leading zero [01] and [1, 02]."],
    ["A tab [1\t,2] and a line break [1\n,2]."],
    [`Too many numbers in a group [${Array.from({ length: 51 }, (_, i) => i + 1).join(",")}].`],
    ["Ranges adding up to too many [1-30, 31-51]."],
    ["A reference link's label [text][1]."],
    ["Brackets around a chain [[1]] and [1, [2]] and [[3][4]]."],
    ["Escaped \\[1]."],
    ["Inside a link's text [see [1]](https://example.org)."],
    ["A reversed range [4-2]."],
    [`A huge range [1-${MAX_GROUP_NUMBERS + 1}].`],
    ["Too many digits [12345]."],
    ["Letters [1a] and [a1] and [ 1]."],
  ])("%j has no marker", (text) => {
    expect(linked(text)).toEqual([]);
  });

  test("a range expands to its numbers but renders as written", () => {
    expect(parseMarkerGroup("[2-4, 7]", 0)).toMatchObject({ end: 8, numbers: [2, 3, 4, 7] });
    const [html] = renderBlocks("See [2-4].", { turn: "t1" });
    expect(html).toBe(
      '<p>See [<a href="#cite-t1-2" data-ref-turn="t1" data-ref-index="2">2</a>-' +
        '<a href="#cite-t1-4" data-ref-turn="t1" data-ref-index="4">4</a>].</p>\n',
    );
  });

  test("a hostile turn id cannot break out of the attribute", () => {
    const [html] = renderBlocks("x [1]", { turn: '"><script>' });
    expect(html).toContain('data-ref-turn="___script_"');
    expect(html).not.toContain("<script");
  });
});
