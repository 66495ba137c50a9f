"""How fast a big evaluation report opens in chromium: 2,000 vs 10,000 scored turns.

The bundled suite runs on the offline model over a few cases of each dataset (real records,
real scores and reasons); the result is then repeated under new case ids until it holds N
scored turns (the case browser lists one entry per turn), and written as ``report.html``.
Each report is served by a plain HTTP server on loopback and opened in Debian's headless
chromium (Playwright), measured side by side in one run:

- ``write``: writing the run's outputs in Python (``write_outputs``: every table as CSV and
  Parquet, ``run.json`` and ``report.html``), the median of ``--repeats`` writes; ``load``
  is the 1-minute load average after them. The goal is 5 s for 10,000 turns;
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

``--before REF`` writes the same outputs with the code of git commit REF too (its
``src`` and this benchmark's helpers, in a subprocess that writes when told to) and
measures both, alternating write by write and page by page in one browser: the
before/after ratios are then measured side by side. ``--quick`` measures 500 vs 2,000
turns; ``--no-browser`` only the writing. The pages need chromium (``apt-get install
chromium``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import io
import json
import os
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
from citelab.evals.report import write_outputs

BUDGET = 2.0
WRITE_BUDGET = 5.0
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


def write_now(result: EvalResult, folder: Path) -> float:
    """Seconds to write ``result``'s outputs into ``folder`` with this checkout's code."""
    began = time.perf_counter()
    write_outputs(result, folder, [], title=f"bench {len(result.turns)}")
    return time.perf_counter() - began


# Run in a subprocess from the tree of another commit: its citelab writes the outputs, one
# size each time a line with the size arrives, answering with a JSON line.
_WRITE_BEFORE = """
import json, sys, time
from pathlib import Path
tree, out, *sizes = sys.argv[1:]
sys.path[:0] = [str(Path(tree, "src")), str(Path(tree, "benchmarks"))]
import citelab
if not Path(citelab.__file__).resolve().is_relative_to(Path(tree).resolve()):
    raise SystemExit(f"imported {citelab.__file__}, not the tree of the commit")
import bench_report
from citelab.evals.report import write_outputs
base = bench_report.base_result(Path(out) / "before-base")
results = {size: bench_report.repeated(base, int(size)) for size in sizes}
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    size = line.strip()
    result = results[size]
    began = time.perf_counter()
    write_outputs(result, Path(out) / f"before-{size}", [], title=f"bench {len(result.turns)}")
    seconds = time.perf_counter() - began
    print(json.dumps({"turns": len(result.turns), "write": seconds}), flush=True)
"""


class BeforeWriter:
    """The outputs as the code of commit ``ref`` writes them (into ``before-<size>/``)."""

    def __init__(self, ref: str, sizes: tuple[int, ...], folder: Path) -> None:
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
        self.ref = ref
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WRITE_BEFORE, str(tree), str(folder), *map(str, sizes)],
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise SystemExit(f"writing the outputs of {self.ref} failed (exit {code})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def write(self, size: int) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{size}\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 vs 2,000 turns")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="REF", help="also measure the outputs of commit REF")
    parser.add_argument("--no-browser", action="store_true", help="measure the writing only")
    args = parser.parse_args()
    sizes = (500, 2_000) if args.quick else (2_000, 10_000)
    from _browser import chromium_executable, launched_chromium

    if not args.no_browser and chromium_executable() is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = _write_rows(sizes, folder, args.repeats, args.before)
        if not args.no_browser:
            _open_pages(rows, folder, args.repeats, launched_chromium)
    return _report(rows, args.repeats)


def _write_rows(
    sizes: tuple[int, ...], folder: Path, repeats: int, ref: str | None
) -> list[dict[str, Any]]:
    """Write each size's outputs ``repeats`` times with this code (and with ``ref``'s),
    alternating; one row per code and size with the median write."""
    base = base_result(folder)
    results = {size: repeated(base, size) for size in sizes}
    codes = ["now"] + ([ref] if ref else [])
    rows: list[dict[str, Any]] = [
        {"code": code, "size": size, "file": f"{'now' if code == 'now' else 'before'}-{size}"}
        for code in codes
        for size in sizes
    ]
    before = BeforeWriter(ref, sizes, folder) if ref else None
    times: dict[str, list[float]] = {row["file"]: [] for row in rows}
    try:
        for _ in range(repeats):  # alternate, so load hits both codes alike
            for row in rows:
                size = int(row["size"])
                if before is not None and row["code"] != "now":
                    times[row["file"]].append(float(before.write(size)["write"]))
                else:
                    times[row["file"]].append(write_now(results[size], folder / row["file"]))
    finally:
        if before is not None:
            before.close()
    load = os.getloadavg()[0]
    for row in rows:
        row["file"] = f"{row['file']}/report.html"
        row["turns"] = len(results[int(row["size"])].turns)
        row["bytes"] = (folder / row["file"]).stat().st_size
        row["write"] = statistics.median(times[row["file"].split("/")[0]])
        row["load"] = load
    return rows


def _report(rows: list[dict[str, Any]], repeats: int) -> int:
    """Print the table and the ratios; 0 when the biggest report is within both budgets."""
    print(f"medians of {repeats} writes and openings; every time in seconds")
    print(
        f"{'code':>9} {'turns':>7} {'MB':>6} {'write':>7} {'load':>5} {'parsed':>7} {'rows':>6} "
        f"{'open':>6} {'filter':>7} {'case':>6}"
    )
    for row in rows:
        opened = (
            f"{row['parsed']:>7.2f} {row['rows']:>6.2f} {row['open']:>6.2f} "
            f"{row['filter']:>7.3f} {row['case']:>6.3f}"
            if "open" in row
            else ""
        )
        print(
            f"{row['code'][:9]:>9} {row['turns']:>7} {row['bytes'] / 1e6:>6.1f} "
            f"{row['write']:>7.2f} {row['load']:>5.1f} {opened}"
        )
    now = [row for row in rows if row["code"] == "now"]
    small, big = now
    if "open" in big:
        print(
            f"ratios {big['turns']}/{small['turns']} turns: open "
            f"{big['open'] / small['open']:.1f}x, filter {big['filter'] / small['filter']:.1f}x, "
            f"case {big['case'] / small['case']:.1f}x"
        )
    for old in (row for row in rows if row["code"] != "now"):
        after = next(row for row in now if row["turns"] == old["turns"])
        line = (
            f"{old['turns']} turns, {old['code']} -> now: write {old['write']:.2f} -> "
            f"{after['write']:.2f} s ({old['write'] / after['write']:.1f}x faster)"
        )
        if "open" in old:
            line += (
                f", open {old['open']:.2f} -> {after['open']:.2f} s "
                f"({old['open'] / after['open']:.1f}x faster)"
            )
        print(f"{line}, page {old['bytes'] / 1e6:.1f} -> {after['bytes'] / 1e6:.1f} MB")
    ok = big["write"] <= WRITE_BUDGET
    print(
        f"{big['turns']} turns written in {big['write']:.2f} s: "
        f"{'within' if ok else 'OVER'} the {WRITE_BUDGET:g} s budget (load {big['load']:.1f})"
    )
    if "open" in big:
        opens = big["open"] < BUDGET
        print(
            f"{big['turns']} turns open in {big['open']:.2f} s: "
            f"{'within' if opens else 'OVER'} the {BUDGET:g} s budget"
        )
        ok = ok and opens
    return 0 if ok else 1


def _open_pages(
    browser_rows: list[dict[str, Any]], folder: Path, repeats: int, launch: Any
) -> None:
    """Open every row's page ``repeats`` times, alternating, and store the medians."""
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    samples: dict[str, list[dict[str, float]]] = {row["file"]: [] for row in browser_rows}
    try:
        with launch(folder / "chromium") as browser:
            for _ in range(repeats):  # alternate, so load hits every page alike
                for row in browser_rows:
                    url = f"http://127.0.0.1:{port}/{row['file']}"
                    samples[row["file"]].append(measure(browser, url))
    finally:
        server.shutdown()
        server.server_close()
    for row in browser_rows:
        row.update(medians(samples[row["file"]]))


if __name__ == "__main__":
    raise SystemExit(main())
