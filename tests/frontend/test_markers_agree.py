"""The Python marker grammar and the front end's (``js/render/citations.js``) read the same
cases the same way: which groups are citations, which numbers each names, which are linked.

Three readings of each case: ``parse_markers`` (what finalize keeps), the Python renderer's
links (``render_answer_html``) and the front end's markdown-it rule (run in Node on the
front end's own markdown setup). Every case reads alike: where Markdown takes brackets for
other syntax (a link's text, a reference definition), the grammar follows Markdown.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from citelab.contract import parse_markers, render_answer_html

ROOT = Path(__file__).resolve().parents[2]
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"

AGREED = [
    "One [3].",
    "A list [1, 3] and [1,3] and [1 , 2] and [1,  2].",
    "A range [2-4].",
    "An en-dash range [2–4].",
    "Ranges in a list [1, 3-5] and [1-2, 4-5] and [1,2-3].",
    "A one-number range [3-3].",
    "A range of fifty [1-50].",
    "Two groups [1][3] and a range beside a group [1-2][3].",
    "Apart [1] [2].",
    "Zero [0].",
    "Four digits [9999] and a year [2023].",
    "Emphasis *a [1]* and glued [1]b.",
    "In a heading and a list:\n\n# H [1]\n\n- item [2-3]",
    "In a table:\n\n| a |\n|---|\n| x [5] |",
    # Not citations, in every reading.
    "Spaces inside [ 1 ] and a semicolon [1;2].",
    "A reversed range [4-2].",
    "A range too large [1-51] and [1-100].",
    "Five digits [12345] and [10000].",
    "A link [1](https://example.org).",
    "An image ![1](x.png).",
    "A reference link [1][ref].\n\n[ref]: https://example.org",
    "A collapsed reference [1][].",
    "A reference definition:\n\n[1]: https://example.org",
    "A footnote [^1].",
    "Inline code `[1]`.",
    "```\n[1]\n```",
    "    [1] indented code",
    "Escaped \\[1].",
    "Letters [1a] and [a1].",
    # Once known differences (#30): the front end was looser than the grammar.
    "A leading zero [01].",
    "A tab [1\t,2].",
    "Spaces in a range [2 - 4].",
    "Many [" + ",".join(map(str, range(1, 52))) + "].",
    "Exactly fifty [" + ",".join(map(str, range(1, 51))) + "].",
    "An image label great![1].",
    "A label [text][1] and an escaped one \\[text\\][2].",
    "Brackets [[1]] and [1, [2]] and [[3][4]].",
    "A chain after a bracket [1][2] and (see [3]).",
    # Once known differences (#30): Markdown's reading is the grammar's now.
    "Indented definition:\n\n  [1]: x",
    "Indented three spaces:\n\n   [1]: x",
    "Inside a link's text [see [1]](https://example.org).",
    "Inside a link's longer text [see [1] and [2-3] here](https://example.org 'a title').",
    "Glued to a paragraph, a definition is text:\nFoo\n[1]: x",
    "A colon after a citation [1]: yes.",
    "Not a link after all [see [1]] (https://example.org) and [see [2]](a b).",
    "An escaped opener \\[see [1]](https://example.org).",
    "Brackets in code `[see` [1]](https://example.org).",
    "A link then a citation [a](https://example.org) [2].",
    "An image's text ![see [1]](x.png).",
]


def _front_end_readings(cases: list[str], tmp_path: Path) -> list[dict[str, list[int]]]:
    """Per case, the front end's citation groups and linked numbers (markdown-it in Node)."""
    if shutil.which("node") is None or not ESBUILD.exists():
        pytest.skip("node or node_modules is missing (run `npm ci`): cannot run the front end")
    entry = tmp_path / "read_markers.mjs"
    markdown = (ROOT / "js" / "render" / "markdown.js").as_posix()
    entry.write_text(
        f'import {{ createMarkdown }} from "{markdown}";\n'
        """
const md = createMarkdown();
let input = "";
for await (const chunk of process.stdin) input += chunk;
const readings = JSON.parse(input).map((text) => {
  const groups = [];
  const walk = (tokens) => {
    for (const token of tokens) {
      if (token.type === "citation") groups.push(token.meta.numbers);
      if (token.children) walk(token.children);
    }
  };
  walk(md.parse(text, { citelabTurn: "t", references: Object.create(null) }));
  const html = md.render(text, { citelabTurn: "t", references: Object.create(null) });
  const links = [...html.matchAll(/data-ref-index="(\\d+)"/g)].map((m) => Number(m[1]));
  return { groups, links };
});
process.stdout.write(JSON.stringify(readings));
""",
        encoding="utf-8",
    )
    bundle = tmp_path / "read_markers.bundle.mjs"
    subprocess.run(
        [str(ESBUILD), str(entry), "--bundle", "--platform=node", "--format=esm",
         "--log-level=warning", f"--outfile={bundle}"],
        cwd=ROOT, check=True, timeout=120,
    )  # fmt: skip
    result = subprocess.run(
        ["node", str(bundle)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    readings: list[dict[str, list[int]]] = json.loads(result.stdout)
    return readings


def _python_readings(text: str) -> dict[str, list[list[int]] | list[int]]:
    html = render_answer_html(text)
    return {
        "groups": [list(marker.numbers) for marker in parse_markers(text)],
        "links": [int(n) for n in re.findall(r'data-ref-index="(\d+)"', html)],
    }


def _differences(text: str, front_end: dict[str, list[int]]) -> list[str]:
    python = _python_readings(text)
    # Number 0 names no source: the Python renderer leaves it as text, the front end links
    # it until its view knows the references.
    js_links = [number for number in front_end["links"] if number != 0]
    found = []
    if python["groups"] != front_end["groups"]:
        found.append(f"groups: python {python['groups']} vs front end {front_end['groups']}")
    if python["links"] != js_links:
        found.append(f"links: python {python['links']} vs front end {js_links}")
    return found


@pytest.fixture(scope="module")
def front_end(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[int]]]:
    cases = AGREED
    readings = _front_end_readings(cases, tmp_path_factory.mktemp("markers"))
    return dict(zip(cases, readings, strict=True))


@pytest.mark.parametrize("text", AGREED)
def test_python_and_the_front_end_read_markers_alike(
    text: str, front_end: dict[str, dict[str, list[int]]]
) -> None:
    assert _differences(text, front_end[text]) == []


def test_the_renderer_links_each_number_of_a_range_as_written() -> None:
    html = render_answer_html("Fees [1-2] and [3–4, 6].", id_prefix="t")
    assert re.findall(r'data-ref-index="(\d+)"', html) == ["1", "2", "3", "4", "6"]
    assert "Fees [<a " in html
    assert "</a>-<a " in html
    assert "</a>–<a " in html
