"""Labels files: people's support decisions, one JSON line each, saved as each is taken.

The labelling widget (``citelab.Labeller``) writes them and a judge card reads them. One
line per decision, exactly::

    {"id": "...", "claim": "...", "evidence": ["passage", ...], "label": "supported",
     "category": "...", "origin": {...}}

``label`` is ``supported``, ``partially_supported``, ``not_supported`` or ``skip`` (seen
but not decided: a card leaves it out); ``category`` is optional; ``origin`` says where the
pair came from (run, variant, case, turn, statement, citation numbers, source URIs, the
judges' verdicts…).

:class:`LabelFile` appends each line with one write, then flushes and syncs it to disk (and
the folder, when that write created the file), under an exclusive lock: a label survives a
kernel restart or a crash right after it, and two sessions on one file never write one pair
twice (each reads what the other appended before it appends). Opening a file checks every
line: one that is not a label, or an id labelled twice, is an :class:`~citelab.InvalidInput`
naming its line. A last line without its line end is what a crash in the middle of a write
leaves: a complete label gets its line end back; a cut-off one is moved to
``<name>.torn`` beside the file (its bytes kept, nothing lost) and taken out, so its pair
is asked again (never labelled twice). :attr:`LabelFile.notices` says which happened.
:meth:`LabelFile.undo` takes the last line out again (the file is truncated and synced).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citelab._errors import Conflict, InvalidInput
from citelab._validation import validation_problems
from citelab.evals.labels._labels import LabelledPair

if sys.platform != "win32":
    import fcntl

__all__ = ["LABELS", "Label", "LabelFile", "LabelLine", "read_label_file"]

Label = Literal["supported", "partially_supported", "not_supported", "skip"]
LABELS: tuple[Label, ...] = ("supported", "partially_supported", "not_supported", "skip")
"""Every label a line may carry; ``skip`` means seen and not decided."""

_SHOWN_PROBLEMS = 20


class LabelLine(BaseModel):
    """One line of a labels file: a person's decision on a (claim, evidence) pair."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    """Stable id of the pair (the labelling widget derives it from where the pair came
    from), so a later session knows the pair is labelled."""
    claim: str
    evidence: list[str]
    """The passages, in order (a judge reads them joined by line breaks)."""
    label: Label
    category: str | None = None
    """What the pair probes, for per-category figures (left out of the line when None)."""
    origin: dict[str, Any] = Field(default_factory=dict)
    """Where the pair came from, and anything else worth keeping with the label."""

    def to_bytes(self) -> bytes:
        """The line as written: UTF-8 JSON and its line end."""
        data: dict[str, Any] = {
            "id": self.id,
            "claim": self.claim,
            "evidence": self.evidence,
            "label": self.label,
        }
        if self.category is not None:
            data["category"] = self.category
        data["origin"] = self.origin
        try:
            text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"label {self.id!r}: its origin is not JSON data ({exc})") from exc
        return (text + "\n").encode("utf-8")


@dataclass(frozen=True)
class _Contents:
    """What a labels file holds: its complete lines (each with the offset it starts at),
    where they end, and what follows the last line end."""

    lines: list[tuple[LabelLine, int]]
    end: int
    tail: bytes


def read_label_file(path: str | os.PathLike[str]) -> list[LabelLine]:
    """The labels of a file, in file order, without changing it. A cut-off last line (see
    the module docs) is an :class:`~citelab.InvalidInput` here: open the file with
    :class:`LabelFile` to set it aside."""
    target = Path(path)
    contents = _parse(_read_bytes(target), target)
    if contents.tail.strip():
        raise InvalidInput(
            f"labels {target}: the last line is cut off (no line end; {len(contents.tail)} "
            "bytes): open the file with LabelFile (or the Labeller) to move it aside"
        )
    return [line for line, _ in contents.lines]


class LabelFile:
    """An append-only labels file; see the module docs. Created on the first label."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInput(f"labels {self.path} is a folder; give a file (labels.jsonl)")
        self.notices: list[str] = []
        """What opening the file repaired (a cut-off last line), for the person to read."""
        self._lines: list[tuple[LabelLine, int]] = []
        self._by_id: dict[str, LabelLine] = {}
        self._stamp: tuple[int, int] | None = None  # (size, mtime_ns) as last read or written
        if self.path.exists():
            with self._locked(create=False) as fd:
                self._sync(fd)

    def __len__(self) -> int:
        return len(self._lines)

    def __contains__(self, pair_id: object) -> bool:
        return pair_id in self._by_id

    @property
    def labels(self) -> list[LabelLine]:
        """Every label, in file order."""
        return [line for line, _ in self._lines]

    def get(self, pair_id: str) -> LabelLine | None:
        """The label of pair ``pair_id`` (None when it has none)."""
        return self._by_id.get(pair_id)

    def counts(self) -> Counter[str]:
        """Labels per value."""
        return Counter(line.label for line, _ in self._lines)

    def pairs(self, partial_as: Literal["no", "yes", "skip"] = "no") -> list[LabelledPair]:
        """The decisions as "fully supported?" pairs for :func:`calibrate`: ``supported`` is
        yes, ``not_supported`` no, ``partially_supported`` ``partial_as`` (``skip``: left
        out); ``skip`` labels are left out."""
        if partial_as not in ("no", "yes", "skip"):
            raise InvalidInput(f"partial_as must be no, yes or skip, got {partial_as!r}")
        meaning = {"supported": True, "not_supported": False, "partially_supported": partial_as}
        pairs = []
        for line, _ in self._lines:
            said = meaning.get(line.label, "skip")
            if said == "skip":
                continue
            label = said is True or said == "yes"
            pairs.append(
                LabelledPair(
                    id=line.id,
                    claim=line.claim,
                    evidence=line.evidence,
                    label=label,
                    category=line.category or "",
                    grade=line.label,  # a three-way label, as people gave it
                )
            )
        return pairs

    def refresh(self) -> None:
        """Read what another session appended since (done before every write anyway)."""
        if self.path.exists():
            with self._locked(create=False) as fd:
                self._sync(fd)

    def append(self, line: LabelLine) -> bool:
        """Write ``line`` and sync it to disk; False (nothing written) when its pair has a
        label already (another session on the same file took it first). A write that fails
        (a full disk) leaves the file as it was and raises :class:`~citelab.InvalidInput`."""
        data = line.to_bytes()
        created = not self.path.exists()
        if created:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InvalidInput(
                    f"cannot write labels {self.path}: {exc.strerror or exc}"
                ) from exc
        with self._locked(create=True) as fd:
            self._sync(fd)
            if line.id in self._by_id:
                return False
            start = self._size()
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, start)  # no cut-off line left behind
                raise InvalidInput(
                    f"cannot write labels {self.path}: {exc.strerror or exc}; the label was "
                    "not saved"
                ) from exc
            if created:
                _sync_folder(self.path.parent)
            self._add(line, start)
            self._stamp = _stamp(fd)
        return True

    def undo(self, pair_id: str | None = None) -> LabelLine:
        """Take the file's last label out (truncate and sync) and return it. With
        ``pair_id``, only when the last label is that pair's (else :class:`~citelab.Conflict`)."""
        if not self.path.exists():
            raise InvalidInput(f"labels {self.path}: nothing to undo (no file yet)")
        with self._locked(create=False) as fd:
            self._sync(fd)
            if not self._lines:
                raise InvalidInput(f"labels {self.path}: nothing to undo (it holds no label)")
            last, start = self._lines[-1]
            if pair_id is not None and last.id != pair_id:
                raise Conflict(
                    f"labels {self.path}: its last label is for {last.id!r}, not {pair_id!r} "
                    "(another session labelled since?): nothing was undone"
                )
            os.ftruncate(fd, start)
            os.fsync(fd)
            self._lines.pop()
            del self._by_id[last.id]
            self._stamp = _stamp(fd)
        return last

    # --- the file --------------------------------------------------------------------------

    @contextmanager
    def _locked(self, *, create: bool) -> Iterator[int]:
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise InvalidInput(f"cannot open labels {self.path}: {exc.strerror or exc}") from exc
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    def _size(self) -> int:
        return self._stamp[0] if self._stamp is not None else 0

    def _sync(self, fd: int) -> None:
        """Read the file again when it changed since this object last read or wrote it."""
        if self._stamp == _stamp(fd):
            return
        os.lseek(fd, 0, os.SEEK_SET)
        contents = _parse(_read_all(fd), self.path)
        self._lines, self._by_id = [], {}
        for line, start in contents.lines:
            self._add(line, start)
        if contents.tail:
            self._repair(fd, contents)
        self._stamp = _stamp(fd)

    def _add(self, line: LabelLine, start: int) -> None:
        self._lines.append((line, start))
        self._by_id[line.id] = line

    def _repair(self, fd: int, contents: _Contents) -> None:
        """Deal with a last line that has no line end (see the module docs)."""
        tail = contents.tail
        name = self.path.name
        complete = _complete_line(tail) if tail.strip() else None
        if complete is not None and complete.id not in self._by_id:
            _write_all(fd, b"\n")
            os.fsync(fd)
            self._add(complete, contents.end)
            self.notices.append(
                f"{name}: its last label had lost its line end (a write cut short); the line "
                "end was added and the label kept"
            )
            return
        if tail.strip():
            torn = self.path.with_name(name + ".torn")
            with torn.open("ab") as out:
                out.write(tail + b"\n")
                out.flush()
                os.fsync(out.fileno())
            self.notices.append(
                f"{name}: its last line was cut off ({len(tail)} bytes without a line end: a "
                f"crash or a full disk while it was written). Those bytes were moved to "
                f"{torn.name} and the line taken out of {name}, so its pair is asked again."
            )
        os.ftruncate(fd, contents.end)
        os.fsync(fd)


def _parse(data: bytes, path: Path) -> _Contents:
    """Every complete line of a labels file; every problem at once as an InvalidInput."""
    problems: list[str] = []
    lines: list[tuple[LabelLine, int]] = []
    first: dict[str, int] = {}
    start = number = 0
    while (stop := data.find(b"\n", start)) >= 0:
        number += 1
        where = f"{path.name}:{number}"
        if data[start:stop].strip():
            line = _line(data[start:stop], where, problems)
            if line is not None:
                seen = first.setdefault(line.id, number)
                if seen == number:
                    lines.append((line, start))
                else:
                    problems.append(
                        f"{where}: id {line.id!r} is labelled already on line {seen} "
                        "(keep one of the two lines)"
                    )
        start = stop + 1
    if problems:
        listed = problems[:_SHOWN_PROBLEMS]
        if len(problems) > _SHOWN_PROBLEMS:
            listed.append(f"… and {len(problems) - _SHOWN_PROBLEMS} more")
        raise InvalidInput(f"labels {path} has {len(problems)} problem(s):\n" + "\n".join(listed))
    return _Contents(lines, start, data[start:])


def _line(raw: bytes, where: str, problems: list[str]) -> LabelLine | None:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        problems.append(f"{where}: not UTF-8 text ({exc.reason})")
        return None
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})")
        return None
    try:
        return LabelLine.model_validate(data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, where, label="field ", whole="(the line)"))
        return None


def _complete_line(raw: bytes) -> LabelLine | None:
    """``raw`` as a label line when it is a whole one."""
    try:
        return LabelLine.model_validate_json(raw)
    except ValidationError:
        return None


def _read_bytes(path: Path) -> bytes:
    if path.is_dir():
        raise InvalidInput(f"labels {path} is a folder; give a file (labels.jsonl)")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read labels {path}: {exc.strerror or exc}") from exc


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _stamp(fd: int) -> tuple[int, int]:
    status = os.fstat(fd)
    return status.st_size, status.st_mtime_ns


def _sync_folder(folder: Path) -> None:
    """Sync the folder's entry of a new file (where the platform allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
