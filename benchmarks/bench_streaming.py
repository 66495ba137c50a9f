"""Streaming render cost in Chromium: ours (incremental) vs the naive way vs the seed's way.

Streams a ~25,000-character answer (~6,000 tokens) token by token through three renderers
built from ``js/`` and prints, measured side by side in one run:

- the cost of one update near the end relative to one near the start (target ≤ 1.5×);
- the worst single update (target < 4 ms);
- main-thread share while tokens arrive at 1,000/s with one render per animation frame
  (target ≤ 10%);
- the naive and the seed's strategies as multiples of one full render, summed per token;
- tokens per second the renderer sustains (target ≥ 1,000).

Needs Node + npm (to bundle ``js/bench/streaming.js``) and Debian's chromium
(``scripts/ensure-chromium.sh``). ``--quick`` uses a 6,000-character answer.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Route, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ORIGIN = "http://127.0.0.1:8766"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HARNESS = """<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/citelab.css"></head><body>
<script type="module" src="/bench.js"></script></body></html>"""
RATES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000]
KEEPS_UP_MS = 50.0  # three frames at 60 Hz


def bundle(out: Path) -> None:
    """Bundle the benchmark entry and the CSS with the project's pinned esbuild."""
    subprocess.run(["bash", "scripts/js.sh", "install"], cwd=ROOT, check=True)
    esbuild = str(ROOT / "node_modules" / ".bin" / "esbuild")
    subprocess.run(
        [
            esbuild,
            "js/bench/streaming.js",
            "--bundle",
            "--minify",
            "--format=esm",
            f"--outfile={out / 'bench.js'}",
            "--log-level=warning",
        ],
        cwd=ROOT,
        check=True,
    )
    shutil.copy(ROOT / "src" / "citelab" / "static" / "citelab.css", out / "citelab.css")


def serve(files: Path) -> Any:
    def handler(route: Route) -> None:
        url = urlsplit(route.request.url)
        name = "harness.html" if url.path == "/" else url.path.lstrip("/")
        if route.request.url.startswith(ORIGIN) and name == "harness.html":
            route.fulfill(status=200, content_type="text/html", body=HARNESS)
        elif route.request.url.startswith(ORIGIN) and (files / name).is_file():
            kind = "text/css" if name.endswith(".css") else "text/javascript"
            route.fulfill(status=200, content_type=kind, body=(files / name).read_bytes())
        else:
            route.abort()

    return handler


def batch_means(times: list[float], size: int = 25) -> list[float]:
    return [statistics.fmean(times[i : i + size]) for i in range(0, len(times) - size + 1, size)]


def run(page: Any, chars: int) -> None:
    page.evaluate(f"window.__tokens = citelabBench.tokenize(citelabBench.makeAnswer({chars}))")
    n_tokens = page.evaluate("window.__tokens.length")
    text_len = page.evaluate(f"citelabBench.makeAnswer({chars}).length")
    full = page.evaluate(f"citelabBench.fullRender(citelabBench.makeAnswer({chars}))")
    print(f"answer: {text_len:,} characters, {n_tokens:,} tokens; one full render {full:.2f} ms")

    ours: list[float] = page.evaluate("citelabBench.perToken('incremental', window.__tokens)")
    page.evaluate("citelabBench.perToken('incremental', window.__tokens)")  # warm JIT
    ours = page.evaluate("citelabBench.perToken('incremental', window.__tokens)")
    means = batch_means(ours)
    tenth = max(1, len(means) // 10)
    start = statistics.median(means[1 : tenth + 1])  # skip the very first batch (warm-up)
    end = statistics.median(means[-tenth:])
    total_ours = sum(ours)
    print("\nincremental (ours), one update per token, layout included:")
    print(f"  update near the start  {start * 1000:7.1f} µs   (median of 25-update means)")
    print(f"  update near the end    {end * 1000:7.1f} µs")
    print(f"  end / start            {end / start:7.2f}×     target ≤ 1.5×")
    ranked = sorted(ours)
    print(f"  worst single update    {max(ours):7.2f} ms     target < 4 ms")
    print(
        f"  99th / 99.9th pct      {ranked[int(len(ranked) * 0.99)]:7.2f} / "
        f"{ranked[int(len(ranked) * 0.999)]:.2f} ms (the worst ones are GC pauses or a busy CPU)"
    )
    parse = page.evaluate("citelabBench.perToken('parseOnly', window.__tokens, {layout: false})")
    dom = page.evaluate("citelabBench.perToken('incremental', window.__tokens, {layout: false})")
    print(
        f"  breakdown per update   parse {statistics.fmean(parse) * 1000:.0f} µs,"
        f" + sanitize and DOM {(statistics.fmean(dom) - statistics.fmean(parse)) * 1000:.0f} µs,"
        f" + layout {(statistics.fmean(ours) - statistics.fmean(dom)) * 1000:.0f} µs"
    )
    multiple = total_ours / full
    print(f"  sum over all tokens    {total_ours:7.0f} ms  = {multiple:.0f}× one full render")
    per_token_rate = 1000 * len(ours) / total_ours
    print(f"  sustained, per token   {per_token_rate:7.0f} tokens/s (no coalescing)")

    print("\nside by side, summed over every token (× one full render):")
    results = {"incremental": total_ours}
    for strategy in ("seed", "naive"):
        times = page.evaluate(f"citelabBench.perToken('{strategy}', window.__tokens)")
        results[strategy] = sum(times)
    for strategy in ("naive", "seed", "incremental"):
        total = results[strategy]
        print(
            f"  {strategy:<12} {total / 1000:8.2f} s  {total / full:8.0f}×"
            f"   ({total / results['incremental']:.0f}× ours)"
        )

    print("\ncoalesced: one render per animation frame while tokens stream in real time")
    print("  (latency: from a token's arrival to the end of the frame that shows it)")
    sustained = 0
    for rate in RATES:
        result = page.evaluate(f"citelabBench.coalesced(window.__tokens, {rate})")
        share = result["renderTime"] / result["duration"]
        keeps = result["p95"] < KEEPS_UP_MS
        lower_rates_kept_up = rate == RATES[0] or sustained == RATES[RATES.index(rate) - 1]
        if keeps and lower_rates_kept_up:
            sustained = rate
        print(
            f"  {rate:>6,} tokens/s: main thread {share:6.1%}, {result['frames']:4d} frames,"
            f" longest render {result['longest']:5.2f} ms, latency p50 {result['p50']:5.1f}"
            f" / p95 {result['p95']:5.1f} / max {result['max']:5.1f} ms"
        )
        if rate == 1_000:
            print(f"  {'':>6}  main-thread share at 1,000 tokens/s: {share:.1%}   target ≤ 10%")
    print(
        f"  sustained (p95 latency under {KEEPS_UP_MS:.0f} ms at this rate and every lower one):"
        f" {sustained:,} tokens/s (highest tried {RATES[-1]:,})   target ≥ 1,000"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 6,000-character answer")
    args = parser.parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        print("chromium is not on PATH: run scripts/ensure-chromium.sh", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        files = Path(tmp)
        bundle(files)
        env: dict[str, str | float | bool] = {**os.environ, "XDG_CONFIG_HOME": tmp, "TMPDIR": tmp}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS, env=env
            )
            page = browser.new_page()
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.route("**/*", serve(files))
            page.goto(f"{ORIGIN}/")
            page.wait_for_function("window.citelabBench !== undefined")
            print(f"Chromium {browser.version}")
            run(page, 6_000 if args.quick else 25_000)
            browser.close()
        outside = [url for url in requests if urlsplit(url).hostname != "127.0.0.1"]
        if outside:
            print(f"requests left loopback: {outside}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
