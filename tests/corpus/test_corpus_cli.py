import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citelab.cli import main


@pytest.fixture
def intranet(tmp_path: Path, corpora_dir: Path) -> Path:
    """A private copy of the intranet corpus, so that its index is written under tmp_path."""
    return Path(shutil.copy(corpora_dir / "intranet.jsonl", tmp_path / "intranet.jsonl"))


def test_synth_writes_a_deterministic_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "synth.jsonl"
    assert main(["corpus", "synth", "--entities", "25", "--seed", "4", "--out", str(out)]) == 0
    assert "wrote 25 entities" in capsys.readouterr().err
    assert len(out.read_text(encoding="utf-8").splitlines()) == 25
    assert main(["corpus", "synth", "--entities", "25", "--seed", "4"]) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")


def test_synth_rejects_a_non_positive_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["corpus", "synth", "--entities", "0"])
    assert "expected a positive integer, got 0" in capsys.readouterr().err


def test_info_prints_counts_and_access(intranet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "info", str(intranet)]) == 0
    text = capsys.readouterr().out
    assert "entities     42  (node: 42)" in text
    assert "access       16 public, 26 restricted" in text
    assert "roles        finance, hr, staff" in text
    assert main(["corpus", "info", str(intranet), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["access"]["users"] == ["alice", "bob"]


def test_index_builds_once_then_is_up_to_date(
    intranet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["corpus", "index", str(intranet)]) == 0
    assert "index built (no index yet)" in capsys.readouterr().out
    assert (tmp := intranet.with_name("intranet.jsonl.index")).is_dir(), tmp
    assert main(["corpus", "index", str(intranet)]) == 0
    assert "index up to date" in capsys.readouterr().out
    assert main(["corpus", "index", str(intranet), "--max-chars", "200"]) == 0
    assert "index built (chunking changed)" in capsys.readouterr().out


def test_search_filters_by_reader(intranet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "search", str(intranet), "Larkspur restructuring"]) == 0
    assert json.loads(capsys.readouterr().out) == {"results": []}
    args = ["corpus", "search", str(intranet), "Larkspur restructuring", "--user", "alice"]
    assert main([*args, "--role", "staff", "--role", "hr", "--max-results", "1"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["entity_id"] for r in results] == ["32"]


def test_errors_exit_with_2_and_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["corpus", "info", str(tmp_path / "missing.jsonl")]) == 2
    assert "citelab corpus: corpus file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"entity_type": "node"}\n', encoding="utf-8")
    assert main(["corpus", "index", str(bad)]) == 2
    assert "bad.jsonl:1: field entity_id: Field required" in capsys.readouterr().err
    assert main(["corpus", "info", str(bad.with_name("x")), "--max-chars", "3"]) == 2
    assert "--max-chars 3: Input should be greater than or equal to 8" in capsys.readouterr().err


def test_a_bundled_corpus_can_be_named_as_in_agent_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["corpus", "info", "intranet"]) == 0
    assert capsys.readouterr().out.startswith("corpus       intranet\n")
    assert main(["corpus", "info", "nosuchcorpus"]) == 2
    err = capsys.readouterr().err
    assert "unknown fixture corpus 'nosuchcorpus'" in err
    assert "university" in err  # the valid names are listed


def test_a_folder_given_as_a_corpus_says_it_is_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder is imported as a corpus (citelab corpus import); an empty one says so.
    assert main(["corpus", "info", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} holds no document to import" in err
    assert "does not exist" not in err


@pytest.mark.slow
def test_a_reader_that_closes_the_pipe_ends_it_quietly() -> None:
    # Far more than a pipe holds (64 KiB), so the writer meets the closed pipe for sure.
    command = [sys.executable, "-m", "citelab", "corpus", "synth", "--entities", "3000"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        process.stdout.read(10)  # as `| head -c 10` does, then close the pipe
        process.stdout.close()
        _, err = process.communicate(timeout=60)
    assert b"Traceback" not in err
    assert b"BrokenPipeError" not in err
    assert process.returncode == 141


def test_info_says_in_plain_words_which_languages_entities_lack(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["corpus", "info", "helpcentre"]) == 0
    out = capsys.readouterr().out
    assert "incomplete" not in out
    assert (
        "languages    20 of 42 entities are not in every language (8 have no de version, "
        "8 no en, 12 no fr);\n             a reader asking in a language an entity lacks is "
        "answered from its text in another language\n"
    ) in out
    assert main(["corpus", "info", "university"]) == 0
    assert "languages    every entity is in en\n" in capsys.readouterr().out
