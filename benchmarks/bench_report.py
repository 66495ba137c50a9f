"""How fast a big evaluation report opens in chromium: 1,000 vs 10,000 scored turns.

The bundled suite runs on the offline model over a few cases of each dataset (real records,
real scores and reasons); the result is then repeated under new case ids until it holds N
scored turns (the case browser lists one entry per turn), and written as ``report.html``.
Each report is served by a plain HTTP server on loopback and opened in Debian's headless
chromium (Playwright), measured side by side in one run:

- ``render``: writing the HTML in Python;
- ``open``: from navigation to the case list drawn (the page parsed, the data read, the first
  rows in the DOM), the budget being 2 s for 10,000 turns;
- ``filter``: choosing a variant in the list (redraw of the matching rows);
- ``case``: opening one turn (its answer rendered through the front end).

``--quick`` measures 500 vs 2,000 turns. Needs chromium (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

from citelab.evals import EvalResult, load_suite, run
from citelab.evals._report import render_html

BUDGET = 2.0


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
    big = EvalResult(
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
    keep = big.turns.head(turns)[["dataset", "case_id"]].drop_duplicates()
    wanted = set(map(tuple, keep.to_numpy()))
    return trimmed(big, wanted)


def trimmed(result: EvalResult, wanted: set[tuple[str, str]]) -> EvalResult:
    def frame(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        pairs = list(zip(table["dataset"], table["case_id"], strict=True))
        return table[[pair in wanted for pair in pairs]].reset_index(drop=True)

    return EvalResult(
        scores=frame(result.scores),
        turns=frame(result.turns),
        details={level: frame(table) for level, table in result.details.items()},
        scorers=result.scorers,
        config=result.config,
        seed=result.seed,
        resamples=result.resamples,
        records=[r for r in result.records if (r.dataset, r.case_id) in wanted],
        cases={k: v for k, v in result.cases.items() if k in wanted},
    )


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def measure(browser: Any, url: str, repeats: int) -> dict[str, float]:
    opened, filtered, cased = [], [], []
    errors: list[str] = []
    for _ in range(repeats):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda error: errors.append(str(error)))
        began = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_selector(".citelab-case-row", timeout=60_000)
        opened.append(time.perf_counter() - began)
        began = time.perf_counter()
        page.select_option("select[name=variant]", label="no_tool_rewrite")
        page.wait_for_function(
            "document.querySelector('.citelab-case-row td')?.innerText.includes('no_tool')"
        )
        filtered.append(time.perf_counter() - began)
        began = time.perf_counter()
        page.locator(".citelab-case-row").nth(3).click()
        page.wait_for_selector(".citelab-case-detail .citelab-case-answer")
        cased.append(time.perf_counter() - began)
        if errors:
            raise SystemExit(f"page errors: {errors}")
        page.close()
    return {
        "open": statistics.median(opened),
        "filter": statistics.median(filtered),
        "case": statistics.median(cased),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 vs 2,000 turns")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = (500, 2_000) if args.quick else (1_000, 10_000)
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
            rows.append({"turns": len(result.turns), "bytes": len(page.encode()), "render": render})
        handler = functools.partial(Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        try:
            with launched_chromium(folder / "chromium") as browser:
                for row, size in zip(rows, sizes, strict=True):
                    url = f"http://127.0.0.1:{port}/report-{size}.html"
                    row.update(measure(browser, url, args.repeats))
        finally:
            server.shutdown()
            server.server_close()
    print(f"{'turns':>7} {'MB':>6} {'render s':>9} {'open s':>7} {'filter s':>9} {'case s':>7}")
    for row in rows:
        print(
            f"{row['turns']:>7} {row['bytes'] / 1e6:>6.1f} {row['render']:>9.2f} "
            f"{row['open']:>7.2f} {row['filter']:>9.3f} {row['case']:>7.3f}"
        )
    small, big = rows
    print(
        f"ratios {big['turns']}/{small['turns']} turns: open {big['open'] / small['open']:.1f}x, "
        f"filter {big['filter'] / small['filter']:.1f}x, case {big['case'] / small['case']:.1f}x"
    )
    verdict = "within" if big["open"] < BUDGET else "OVER"
    print(f"{big['turns']} turns open in {big['open']:.2f} s: {verdict} the {BUDGET:g} s budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
