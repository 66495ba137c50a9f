"""browser._chromium: how chromium is launched and how a page is kept on loopback.

No browser runs here: the recipe is checked as data, the guard with stand-in emitters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from browser._chromium import LAUNCH_ARGS, guard_loopback, launch_kwargs, leaves_loopback
from citelab import ConfigError


@dataclass
class Event:
    url: str


@dataclass
class Emitter:
    """Records handlers by event name, as a Playwright Page does."""

    handlers: dict[str, list[Callable[[Any], Any]]] = field(default_factory=dict)

    def on(self, event: str, f: Callable[[Any], Any]) -> None:
        self.handlers.setdefault(event, []).append(f)

    def emit(self, event: str, value: Any) -> None:
        for handler in self.handlers.get(event, []):
            handler(value)


class Page(Emitter):
    pass


@dataclass
class Context(Emitter):
    """A BrowserContext: it can open pages, and reports no WebSockets itself."""

    pages: list[Page] = field(default_factory=list)

    def new_page(self) -> Page:
        page = Page()
        self.pages.append(page)
        self.emit("page", page)
        return page


def test_launch_kwargs_keep_chromium_quiet_and_its_files_in_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    kwargs = launch_kwargs(tmp_path)
    assert kwargs["executable_path"] == "/usr/bin/chromium"
    assert kwargs["headless"] is True
    assert kwargs["args"] == list(LAUNCH_ARGS)
    assert {"--disable-background-networking", "--disable-component-update"} <= set(LAUNCH_ARGS)
    assert kwargs["env"]["XDG_CONFIG_HOME"] == kwargs["env"]["TMPDIR"] == str(tmp_path)


def test_no_chromium_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(ConfigError, match="chromium is not on PATH"):
        launch_kwargs(tmp_path)


@pytest.mark.parametrize(
    ("url", "leaves"),
    [
        ("http://127.0.0.1:8765/harness.html", False),
        ("ws://127.0.0.1:8888/api/kernels/x/channels", False),
        ("http://localhost:8000/", False),
        ("http://[::1]:8000/", False),
        ("data:image/png;base64,AAAA", False),
        ("blob:http://127.0.0.1:8765/1c2d", False),
        ("about:blank", False),
        ("https://pypi.org/simple/", True),
        ("http://192.168.1.4/", True),
        ("http://127.0.0.1.evil.example/", True),
        ("file:///etc/passwd", True),
    ],
)
def test_what_leaves_loopback(url: str, leaves: bool) -> None:
    assert leaves_loopback(url) is leaves


def test_the_guard_records_requests_and_websockets_that_leave_loopback() -> None:
    page, seen = Page(), []
    guard_loopback(page, seen)
    page.emit("request", Event("http://127.0.0.1:1/a.js"))
    page.emit("request", Event("https://cdn.example/a.js"))
    page.emit("websocket", Event("ws://127.0.0.1:1/socket"))
    page.emit("websocket", Event("wss://push.example/socket"))
    assert seen == ["https://cdn.example/a.js", "wss://push.example/socket"]


def test_the_guard_on_a_context_watches_every_page_it_opens() -> None:
    context, seen = Context(), []
    guard_loopback(context, seen)
    context.emit("request", Event("https://cdn.example/a.js"))
    page = context.new_page()
    page.emit("websocket", Event("wss://push.example/socket"))
    assert seen == ["https://cdn.example/a.js", "wss://push.example/socket"]
