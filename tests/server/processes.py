"""``citelab serve`` in a child process, as a user runs it (for the CLI and browser tests)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class ServeProcess:
    """``python -m citelab serve …`` in its own process group, its output read in a thread."""

    def __init__(self, tmp: Path, *args: str) -> None:
        env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp / "cache")}
        command = [sys.executable, "-m", "citelab", "serve", "--port", "0", "--db", str(tmp / "db")]
        self.process = subprocess.Popen(
            [*command, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def announcement(self) -> list[str]:
        """The lines printed up to 'Open an address…' (fails if the process ends first)."""
        printed = []
        while True:
            line = self.lines.get(timeout=30)
            assert line, f"citelab serve ended early: {printed}"
            printed.append(line.rstrip("\n"))
            if line.startswith("Open an address"):
                return printed

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.close()

    def close(self) -> int:
        """Wait for the process (killing it if it is still running) and release its pipe."""
        if self.process.poll() is None and self.process.returncode is None:
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        code = self.process.wait(timeout=10)
        self.reader.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code


@contextmanager
def served_page(tmp: Path, agents: str) -> Iterator[str]:
    """``citelab serve`` with ``agents`` (the text of an agents TOML file) in a child process;
    yields the local address it prints, login token included, and stops it afterwards."""
    path = tmp / "agents.toml"
    path.write_text(agents, encoding="utf-8")
    process = ServeProcess(tmp, "--agents", str(path))
    try:
        printed = process.announcement()
        found = re.search(r"local: (http://127\.0\.0\.1:\d+/\?token=\w+)$", printed[1])
        assert found is not None, printed
        yield found.group(1)
    finally:
        process.stop()
