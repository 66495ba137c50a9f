"""A private JupyterLab for the real-browser tests: loopback only, no outbound traffic.

Every Jupyter and IPython directory is a temp dir of its own; the server binds 127.0.0.1 on a
free port with a token, never checks for news or updates, and runs in its own process group,
stopped by its pid when the tests end.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What stops the news prompt and the update check (without checkForUpdates: false the
# server contacts the package index).
NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}


@dataclass
class Lab:
    """A running JupyterLab."""

    process: subprocess.Popen[bytes]
    port: int
    token: str
    root: Path
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def notebook_url(self, name: str, workspace: str | None = None) -> str:
        """The notebook's URL, in a workspace of its own (named after the notebook unless
        named here), so no tab of an earlier test's notebook is restored next to it."""
        where = f"/lab/workspaces/{workspace or Path(name).stem}"
        return f"{self.base}{where}/tree/{name}?token={self.token}"

    def stop_kernels(self) -> None:
        """Shut down every kernel (and its session) a test started, keeping the server. A
        kernel a test restarted or killed may refuse (404, 500): it is on its way out."""
        for kind in ("sessions", "kernels"):
            for entry in self._api("GET", f"/api/{kind}"):
                with contextlib.suppress(urllib.error.HTTPError):
                    self._api("DELETE", f"/api/{kind}/{entry['id']}")

    def _api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            self.base + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # its own group: the server and its kernels
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)


CHAT_CELL = """\
from citelab.agent import default_agents
from citelab.answers import AnswerService, MemoryConversationStore, MemoryLogStore
from citelab.models import ExtractiveModel
from citelab.widget import Chat

service = AnswerService(
    default_agents(), store=MemoryConversationStore(), logs=MemoryLogStore(),
    models={"extractive": ExtractiveModel(piece_delay=0.01)}, index_dir="indexes",
)
chat = Chat(service)
chat"""
"""A notebook cell that shows a chat over the default agents and the offline model
(slowed a little, so streaming is seen)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_lab(home: Path, *, ready_timeout: float = 90.0) -> Lab:
    """Start JupyterLab serving ``home/root``; returns once ``/api/status`` answers."""
    dirs = {name: home / name for name in ("root", "config", "data", "runtime", "ipython")}
    settings = home / "settings"
    for path in (*dirs.values(), settings):
        path.mkdir(parents=True, exist_ok=True)
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps(NOTIFICATION_SETTINGS), encoding="utf-8"
    )
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
        "CITELAB_CACHE_DIR": str(home / "cache"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        f"--ServerApp.root_dir={dirs['root']}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--LabApp.expose_app_in_browser=True",  # the test reads the notebook model's outputs
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
    ]
    log = home / "jupyterlab.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=dirs["root"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lab = Lab(process, port, token, dirs["root"], log)
    try:
        _wait_ready(lab, ready_timeout)
    except BaseException:
        lab.stop()
        raise
    return lab


def _wait_ready(lab: Lab, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(
        f"{lab.base}/api/status", headers={"Authorization": f"token {lab.token}"}
    )
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early:\n{lab.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(
        f"JupyterLab did not answer within {timeout} s:\n{lab.log.read_text()[-3000:]}"
    )


def notebook_json(cells: Sequence[str]) -> str:
    """An nbformat 4.5 notebook of code cells (Python 3 kernel), as JSON text."""
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{index}",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": source,
            }
            for index, source in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook)
