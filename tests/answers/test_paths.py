from __future__ import annotations

from pathlib import Path

import pytest

from citelab import _paths


def test_fixtures_dir_falls_back_to_the_repository() -> None:
    folder = _paths.fixtures_dir()
    assert (folder / "corpora" / "university.jsonl").is_file()


def test_fixtures_dir_prefers_the_packaged_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "_fixtures").mkdir()
    monkeypatch.setattr(_paths, "_PACKAGE_DIR", tmp_path)
    assert _paths.fixtures_dir() == tmp_path / "_fixtures"


def test_cache_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_paths.CACHE_ENV, str(tmp_path / "cache"))
    assert _paths.cache_dir() == tmp_path / "cache"
    assert (tmp_path / "cache").is_dir()


def test_cache_dir_defaults_to_the_platform_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(_paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _paths.cache_dir().parent == tmp_path
    assert _paths.cache_dir().name == "citelab"
