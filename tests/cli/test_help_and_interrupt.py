"""The command line's own words: every ``--help`` reads as written, and ``citelab eval``
interrupted with Ctrl-C says what it kept and how to resume (the real command, a real
SIGINT)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from citelab.cli import build_parser


def _parsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield parser.prog, parser
    for action in parser._actions:  # argparse keeps its subparsers here, and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_no_help_shows_a_doubled_percent_sign() -> None:
    helps = {prog: sub.format_help() for prog, sub in _parsers(build_parser())}
    assert "citelab judges calibrate" in helps
    assert "95% bootstrap" in " ".join(helps["citelab judges calibrate"].split())
    for prog, text in helps.items():
        assert "%%" not in text, prog


SUITE = """
name = "interrupt"
datasets = ["university"]
models = [{spec = "extractive", options = {piece_delay = 0.02}}]
concurrency = 1
scorers = ["anchor_validity"]

[[variants]]
name = "baseline"
"""


def _eval(tmp_path: Path, *options: str, session: bool = False) -> subprocess.Popen[str]:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", "eval", "--suite", str(suite)]
    command += ["--out", str(tmp_path / "out"), "--quiet", "--no-cache", "--limit", "6"]
    return subprocess.Popen(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=session,
    )


def _descendants(pid: int) -> int:
    """How many processes descend from ``pid`` (read from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = 0, [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += len(children)
        frontier = children
    return found


def _records(tmp_path: Path) -> list[str]:
    path = tmp_path / "out" / "records.jsonl"
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


@pytest.fixture
def ctrl_c_reaches_the_command() -> Iterator[None]:
    """A child inherits an ignored SIGINT (a shell's background job ignores it, and so would
    the command under test): this process handles it meanwhile, so its children start with
    the default, as a command started from a terminal does."""
    before = signal.getsignal(signal.SIGINT)
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.slow
@pytest.mark.usefixtures("ctrl_c_reaches_the_command")
def test_an_interrupted_eval_says_what_is_kept_and_that_it_resumes(tmp_path: Path) -> None:
    process = _eval(tmp_path)
    try:
        waited = 0.0
        while len(_records(tmp_path)) < 2:
            assert process.poll() is None, process.communicate()
            assert waited < 120, "no case finished"
            time.sleep(0.05)  # waiting for the run to write, not timing it
            waited += 0.05
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    kept = len({line for line in _records(tmp_path) if line.strip()})
    assert 2 <= kept < 6
    assert "Traceback" not in err
    assert f"citelab eval: interrupted; {kept} finished case run(s) are kept in " in err
    assert "records.jsonl. Run the same command again to resume" in err
    finished = _eval(tmp_path)
    _out, err = finished.communicate(timeout=300)
    assert finished.returncode == 0, err
    assert len(_records(tmp_path)) > kept


@pytest.mark.slow  # several processes or a server: not in make test-quick
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")
@pytest.mark.usefixtures("ctrl_c_reaches_the_command")
def test_ctrl_c_in_a_terminal_prints_the_message_alone_with_worker_processes(
    tmp_path: Path,
) -> None:
    """A terminal sends Ctrl-C to every process of the command (its process group): the
    scoring workers of ``--executor processes`` must not print a traceback each."""
    process = _eval(tmp_path, "--executor", "processes", "--workers", "1", session=True)
    # a finished case, and the worker started (the process server and its worker); then the
    # worker waits for work (its initializer has run)
    err = _interrupt_when(
        process,
        lambda: len(_records(tmp_path)) >= 1 and _descendants(process.pid) >= 2,
        "no case finished, or no worker started",
        settle=0.5,
    )
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    assert err.strip().startswith("citelab eval: interrupted; "), err


def _interrupt_when(
    process: subprocess.Popen[str], ready: Callable[[], bool], why: str, settle: float = 0.0
) -> str:
    """Wait (at most 120 s) until ``ready()``, then send Ctrl-C to ``process``'s group as a
    terminal does; its stderr. The process is killed if it outlives the test."""
    try:
        waited = 0.0
        while not ready():
            assert process.poll() is None, process.communicate()
            assert waited < 120, why
            time.sleep(0.02)  # waiting for the run to get there, not timing it
            waited += 0.02
        time.sleep(settle)
        os.killpg(process.pid, signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return err


def _default_eval(tmp_path: Path, *options: str) -> subprocess.Popen[str]:
    """``citelab eval --suite default`` (the bundled suite, as ``make demo`` runs it) in its
    own session, so that a signal can reach its whole process group as a terminal's does."""
    env = {**os.environ, "CITELAB_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "citelab", "eval", "--suite", "default"]
    command += ["--out", str(tmp_path / "out"), *options]  # its model-call cache included
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kept", "options"),
    [(1, ["--quiet"]), (60, ["--quiet"]), (120, ["--quiet", "--concurrency", "8"]), (200, [])],
    ids=["first-case", "60-cases", "concurrency-8", "progress-bar"],
)
@pytest.mark.usefixtures("ctrl_c_reaches_the_command")
def test_ctrl_c_while_answering_prints_the_message_alone(
    tmp_path: Path, kept: int, options: list[str]
) -> None:
    """#32: Ctrl-C during ``citelab eval --suite default`` (the default executor) printed
    asyncio tracebacks ("I/O operation on closed file": cases still being answered wrote to
    the records file after the run had closed it) before its message. Sent as a terminal
    does (to the process group) at several moments of the answering."""
    process = _default_eval(tmp_path, *options)
    err = _interrupt_when(
        process, lambda: len(_records(tmp_path)) >= kept, "too few cases finished"
    )
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "I/O operation on closed file" not in err, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    message = [line for line in lines if not line.startswith("eval default")]  # the bar
    assert len(message) == 1, err
    assert message[0].startswith("citelab eval: interrupted; "), err


_RECORD = (
    '{"key": "a", "variant": "v", "model": "m", "dataset": "d", "case_id": "c", "turns": [{}]}'
)


@pytest.mark.parametrize("content", ["", '{"key": "b"}\n' + _RECORD + '\n{"torn'])
def test_the_message_counts_what_the_records_file_holds(tmp_path: Path, content: str) -> None:
    from citelab.cli.eval import _interrupted_message

    (tmp_path / "records.jsonl").write_text(content, encoding="utf-8")
    message = _interrupted_message(tmp_path)
    if content:
        assert message.startswith("citelab eval: interrupted; 1 finished case run(s) are kept")
    else:
        assert "nothing is kept" in message


def test_building_the_command_line_imports_no_registry_it_lists() -> None:
    """Options whose choices come from a registry (eval --executor, score --format) read it
    only when a value or --help needs it: `citelab ask` does not import the evaluations."""
    code = (
        "import sys; from citelab.cli import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith('citelab.evals')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
