"""The two sanitizing layers allow exactly the same things: nh3 (Python) and DOMPurify (the
front end) turn every shared XSS vector into the same elements, attributes and text.

The vectors are third-party test data, read from ``../shared/testdata/xss/vectors.json``
(skipped when absent); the front end runs in vitest (jsdom), as its own tests do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from citelab.contract import sanitize_html

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT.parent / "shared" / "testdata" / "xss" / "vectors.json"
VITEST = ROOT / "node_modules" / ".bin" / "vitest"


class Shape(HTMLParser):
    """What an HTML fragment lets through: its elements, each with its sorted attributes.

    Text is left out: the two parsers read a fragment in different contexts (DOMPurify parses
    a whole document, so ``<head>`` content, ``<?…>`` and ``<noscript>`` come out as other
    text, or none), which changes text, never markup. ``target`` is left out because the front
    end opens links in a new tab on purpose (its ``rel`` is checked)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kept = sorted((name, value) for name, value in attrs if name != "target")
        self.items.append(f"<{tag} {kept}>")

    def handle_endtag(self, tag: str) -> None:
        self.items.append(f"</{tag}>")


def shape(html: str) -> list[str]:
    parser = Shape()
    parser.feed(html)
    parser.close()
    return parser.items


@pytest.fixture(scope="module")
def vectors() -> list[str]:
    if not VECTORS.is_file():
        pytest.skip(f"the shared XSS vectors are not here ({VECTORS})")
    data = json.loads(VECTORS.read_text(encoding="utf-8"))
    return [row["vector"] for row in data["vectors"]]


@pytest.fixture(scope="module")
def front_end(vectors: list[str], tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    if shutil.which("node") is None or not VITEST.exists():
        pytest.skip("node and the front end's packages (bash scripts/js.sh install) are needed")
    folder = tmp_path_factory.mktemp("layers")
    given, taken = folder / "in.json", folder / "out.json"
    given.write_text(json.dumps(vectors), encoding="utf-8")
    env = {**os.environ, "CITELAB_LAYERS_IN": str(given), "CITELAB_LAYERS_OUT": str(taken)}
    done = subprocess.run(
        [
            str(VITEST),
            "run",
            "--config",
            "js/vitest.config.js",
            "js/tests/render/layers_dump.test.js",
        ],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results: list[dict[str, str]] = json.loads(taken.read_text(encoding="utf-8"))
    assert len(results) == len(vectors)
    return results


def differences(pairs: list[tuple[str, str, str]]) -> list[str]:
    found = []
    for vector, python, javascript in pairs:
        if shape(python) != shape(javascript):
            found.append(
                f"{vector[:120]!r}\n  nh3:       {python[:200]!r}"
                f"\n  DOMPurify: {javascript[:200]!r}"
            )
    return found


def test_both_sanitizers_keep_the_same_things(
    vectors: list[str], front_end: list[dict[str, str]]
) -> None:
    pairs = [
        (v, sanitize_html(v), js["sanitized"]) for v, js in zip(vectors, front_end, strict=True)
    ]
    found = differences(pairs)
    assert not found, f"{len(found)} of {len(pairs)} differ:\n" + "\n".join(found[:10])
