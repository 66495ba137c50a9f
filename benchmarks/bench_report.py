"""How fast a big evaluation report opens in chromium: 2,000 vs 10,000 scored turns.

The bundled suite runs on the offline model over a few cases of each dataset (real records,
real scores and reasons); the result is then repeated under new case ids until it holds N
scored turns (the case browser lists one entry per turn), and written as ``report.html``.
Each report is served by a plain HTTP server on loopback and opened in Debian's headless
chromium (Playwright), measured side by side in one run:

- ``render``: writing the HTML in Python;
- ``parsed``: from navigation start to the whole page parsed (``domInteractive``);
- ``open``: from navigation start to the first frame painted after the case list's first
  rows were drawn: by then the summary tables (plain HTML, shown before any script runs)
  and the first screen of the list are on screen and the filters work. Measured in the
  page (``performance.now()``, a MutationObserver for the first row, two animation frames
  for the paint), so it includes the transfer of the page but no Playwright round trip.
  The budget is 2 s for 10,000 turns;
- ``filter``: choosing a variant in the list (redraw of the matching rows);
- ``case``: opening one turn (its block of details decompressed, its answer rendered
  through the front end).

``--before REF`` writes the same reports with the code of git commit REF too (its
``src`` and this benchmark's helpers, run in a subprocess) and measures both, alternating
page by page in one browser: the before/after ratio is then measured side by side.
``--quick`` measures 500 vs 2,000 turns. Needs chromium (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals import Case, CaseRecord, EvalResult, load_suite, run
from citelab.evals._report import render_html

BUDGET = 2.0
ROOT = Path(__file__).resolve().parent.parent

# Records when the first case row enters the DOM (installed before the page's own scripts).
FIRST_ROW = """
new MutationObserver((_, observer) => {
  if (document.querySelector(".citelab-case-row")) {
    window.__firstRow = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, childList: true });
"""
# Resolves with the time of the frame painted after the row (two frames: the next one
# starts after the previous was painted).
PAINTED = """() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"""


def base_result(folder: Path) -> EvalResult:
    suite = load_suite("default").model_copy(update={"findings": []})
    return run(suite, out_dir=folder / "base", limit=6, progress=False)


def repeated(result: EvalResult, turns: int) -> EvalResult:
    """``result`` repeated under new case ids (``<id>~<copy>``) up to ``turns`` turns."""
    copies = -(-turns // len(result.turns))

    def frame(table: pd.DataFrame) -> pd.DataFrame:
        parts = [table.assign(case_id=table["case_id"] + f"~{i}") for i in range(copies)]
        return pd.concat(parts, ignore_index=True)

    records = [
        record.model_copy(update={"key": f"{record.key}~{i}", "case_id": f"{record.case_id}~{i}"})
        for i in range(copies)
        for record in result.records
    ]
    cases = {
        (dataset, f"{case_id}~{i}"): case
        for i in range(copies)
        for (dataset, case_id), case in result.cases.items()
    }
    big = _reframed(result, frame, records, cases)
    keep = big.turns.head(turns)[["dataset", "case_id"]].drop_duplicates()
    wanted = set(map(tuple, keep.to_numpy()))
    return trimmed(big, wanted)


def trimmed(result: EvalResult, wanted: set[tuple[str, str]]) -> EvalResult:
    def frame(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        pairs = list(zip(table["dataset"], table["case_id"], strict=True))
        return table[[pair in wanted for pair in pairs]].reset_index(drop=True)

    return _reframed(
        result,
        frame,
        [r for r in result.records if (r.dataset, r.case_id) in wanted],
        {k: v for k, v in result.cases.items() if k in wanted},
    )


def _reframed(
    result: EvalResult,
    frame: Callable[[pd.DataFrame], pd.DataFrame],
    records: list[CaseRecord],
    cases: Mapping[tuple[str, str], Case],
) -> EvalResult:
    """``result`` with every table passed through ``frame``, and these records and cases."""
    return EvalResult(
        scores=frame(result.scores),
        turns=frame(result.turns),
        details={level: frame(table) for level, table in result.details.items()},
        scorers=result.scorers,
        config=result.config,
        seed=result.seed,
        resamples=result.resamples,
        records=records,
        cases=cases,
    )


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def measure(browser: Any, url: str) -> dict[str, float]:
    """One opening of ``url``: see the module docs for what each figure is."""
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.add_init_script(FIRST_ROW)
    page.goto(url, wait_until="commit")
    page.wait_for_selector(".citelab-case-row", timeout=60_000)
    painted = page.evaluate(PAINTED) / 1000
    first_row = page.evaluate("window.__firstRow") / 1000
    if not page.locator("h2:text-is('Summary') ~ table").first.is_visible():
        raise SystemExit(f"{url}: the summary is not visible when the list is drawn")
    parsed = page.evaluate("performance.getEntriesByType('navigation')[0].domInteractive") / 1000
    began = time.perf_counter()
    page.select_option("select[name=variant]", label="no_tool_rewrite")
    page.wait_for_function(
        "document.querySelector('.citelab-case-row td')?.innerText.includes('no_tool')"
    )
    filtered = time.perf_counter() - began
    began = time.perf_counter()
    page.locator(".citelab-case-row").nth(3).click()
    page.wait_for_selector(".citelab-case-detail .citelab-case-answer")
    cased = time.perf_counter() - began
    if page.locator(".citelab-case-detail .citelab-case-error").count():
        raise SystemExit(f"{url}: the opened case shows an error")
    page.close()
    if errors:
        raise SystemExit(f"{url}: page errors: {errors}")
    return {
        "parsed": parsed,
        "rows": first_row,
        "open": painted,
        "filter": filtered,
        "case": cased,
    }


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


# Run in a subprocess from the tree of another commit: its citelab writes the reports.
_WRITE_BEFORE = """
import json, sys, time
from pathlib import Path
tree, out, *sizes = sys.argv[1:]
sys.path[:0] = [str(Path(tree, "src")), str(Path(tree, "benchmarks"))]
import citelab
if not Path(citelab.__file__).resolve().is_relative_to(Path(tree).resolve()):
    raise SystemExit(f"imported {citelab.__file__}, not the tree of the commit")
import bench_report
from citelab.evals._report import render_html
base = bench_report.base_result(Path(out) / "before-base")
rows = []
for size in map(int, sizes):
    result = bench_report.repeated(base, size)
    began = time.perf_counter()
    page = render_html(result, [], f"bench {size}")
    render = time.perf_counter() - began
    Path(out, f"before-{size}.html").write_text(page, encoding="utf-8")
    rows.append({"turns": len(result.turns), "bytes": len(page.encode()), "render": render})
print(json.dumps(rows))
"""


def write_before(ref: str, sizes: tuple[int, ...], folder: Path) -> list[dict[str, Any]]:
    """The reports as the code of commit ``ref`` writes them (``before-<size>.html``)."""
    archive = subprocess.run(
        ["git", "archive", ref, "src", "benchmarks", "fixtures", "evaluations"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SystemExit(f"git archive {ref}: {archive.stderr.decode(errors='replace')}")
    tree = folder / "before-tree"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_BEFORE, str(tree), str(folder), *map(str, sizes)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"writing the reports of {ref} failed:\n{done.stderr}")
    rows: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 vs 2,000 turns")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="REF", help="also measure the reports of commit REF")
    args = parser.parse_args()
    sizes = (500, 2_000) if args.quick else (2_000, 10_000)
    from citelab._browser import chromium_executable, launched_chromium

    if chromium_executable() is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base = base_result(folder)
        rows = []
        for size in sizes:
            result = repeated(base, size)
            began = time.perf_counter()
            page = render_html(result, [], f"bench {size}")
            render = time.perf_counter() - began
            (folder / f"report-{size}.html").write_text(page, encoding="utf-8")
            rows.append(
                {
                    "code": "now",
                    "file": f"report-{size}.html",
                    "turns": len(result.turns),
                    "bytes": len(page.encode()),
                    "render": render,
                }
            )
        if args.before:
            for size, row in zip(sizes, write_before(args.before, sizes, folder), strict=True):
                rows.append({"code": args.before, "file": f"before-{size}.html", **row})
        handler = functools.partial(Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        samples: dict[str, list[dict[str, float]]] = {row["file"]: [] for row in rows}
        try:
            with launched_chromium(folder / "chromium") as browser:
                for _ in range(args.repeats):  # alternate, so load hits every page alike
                    for row in rows:
                        url = f"http://127.0.0.1:{port}/{row['file']}"
                        samples[row["file"]].append(measure(browser, url))
        finally:
            server.shutdown()
            server.server_close()
    for row in rows:
        row.update(medians(samples[row["file"]]))
    print(f"medians of {args.repeats} openings; every time in seconds")
    print(
        f"{'code':>9} {'turns':>7} {'MB':>6} {'render':>7} {'parsed':>7} {'rows':>6} "
        f"{'open':>6} {'filter':>7} {'case':>6}"
    )
    for row in rows:
        print(
            f"{row['code'][:9]:>9} {row['turns']:>7} {row['bytes'] / 1e6:>6.1f} "
            f"{row['render']:>7.2f} {row['parsed']:>7.2f} {row['rows']:>6.2f} "
            f"{row['open']:>6.2f} {row['filter']:>7.3f} {row['case']:>6.3f}"
        )
    now = [row for row in rows if row["code"] == "now"]
    small, big = now
    print(
        f"ratios {big['turns']}/{small['turns']} turns: open {big['open'] / small['open']:.1f}x, "
        f"filter {big['filter'] / small['filter']:.1f}x, case {big['case'] / small['case']:.1f}x"
    )
    for before in (row for row in rows if row["code"] != "now"):
        after = next(row for row in now if row["turns"] == before["turns"])
        print(
            f"{before['turns']} turns, {before['code']} -> now: open "
            f"{before['open']:.2f} -> {after['open']:.2f} s "
            f"({before['open'] / after['open']:.1f}x faster), page "
            f"{before['bytes'] / 1e6:.1f} -> {after['bytes'] / 1e6:.1f} MB"
        )
    verdict = "within" if big["open"] < BUDGET else "OVER"
    print(f"{big['turns']} turns open in {big['open']:.2f} s: {verdict} the {BUDGET:g} s budget")
    return 0 if big["open"] < BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
