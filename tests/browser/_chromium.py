"""Launching Debian's chromium through Playwright the one way that works on these machines.

Playwright's own browsers cannot be downloaded here, so the system ``chromium`` is launched by
path, headless, with the flags that keep it from calling home, and with its configuration and
temp files in a folder of the caller's (crash reports otherwise land in ``$HOME``)::

    with launched_chromium(tmp_dir) as browser:
        page = browser.new_page()
        left: list[str] = []
        guard_loopback(page, left)
        ...
        assert left == [], f"requests left loopback: {left}"

Used by the real-browser tests and, through ``benchmarks/_browser.py``, the benchmarks; it is
development tooling, not part of the package. Playwright (a development dependency) is
imported only by :func:`launched_chromium`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from citelab._errors import ConfigError
from citelab._net import is_loopback

__all__ = [
    "LAUNCH_ARGS",
    "chromium_executable",
    "guard_loopback",
    "launch_kwargs",
    "launched_chromium",
    "leaves_loopback",
]

LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Headless chromium as root, with no update, sync or background traffic."""

_MISSING = "Debian's chromium is not on PATH: run scripts/ensure-chromium.sh"


class _Emitter(Protocol):
    """A Playwright ``Page`` or ``BrowserContext``: something with ``.on(event, handler)``."""

    def on(self, event: Any, f: Callable[..., Any]) -> None: ...


def chromium_executable() -> str | None:
    """The path of the system's ``chromium``, or ``None`` when it is not installed."""
    return shutil.which("chromium")


def launch_kwargs(tmp_dir: str | Path) -> dict[str, Any]:
    """Keyword arguments for ``playwright.chromium.launch``; ``tmp_dir`` holds its files.

    No chromium on PATH is a :class:`~citelab.ConfigError` (check
    :func:`chromium_executable` first to skip instead).
    """
    executable = chromium_executable()
    if executable is None:
        raise ConfigError(_MISSING)
    folder = str(tmp_dir)
    return {
        "executable_path": executable,
        "headless": True,
        "args": list(LAUNCH_ARGS),
        "env": {**os.environ, "XDG_CONFIG_HOME": folder, "TMPDIR": folder},
    }


@contextmanager
def launched_chromium(tmp_dir: str | Path) -> Iterator[Any]:
    """A headless chromium (a Playwright ``Browser``) for the ``with`` block, then closed."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_kwargs(tmp_dir))
        try:
            yield browser
        finally:
            browser.close()


def leaves_loopback(url: str) -> bool:
    """True when a browser asking for ``url`` would talk to another machine.

    ``data:``, ``blob:`` and ``about:`` URLs never leave the page.
    """
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return False
    return not is_loopback(parts.hostname or "")


def guard_loopback(page_or_context: _Emitter, seen: list[str]) -> None:
    """Append to ``seen`` every URL the page (or every page of the context) asks for that
    leaves loopback: requests and WebSockets. A test ends by asserting ``seen == []``."""

    def record(url: str) -> None:
        if leaves_loopback(url):
            seen.append(url)

    page_or_context.on("request", lambda request: record(request.url))
    if hasattr(page_or_context, "new_page") and hasattr(page_or_context, "pages"):
        # A context reports no WebSockets of its own: watch each page it opens.
        page_or_context.on(
            "page", lambda page: page.on("websocket", lambda socket: record(socket.url))
        )
    else:
        page_or_context.on("websocket", lambda socket: record(socket.url))
