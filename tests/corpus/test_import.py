"""`citelab corpus import` and folder corpora: titles, ids, languages, skips and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citelab import InvalidInput
from citelab.agent import resolve_corpus_path
from citelab.cli import main
from citelab.corpus import EXAMPLE_LINE, import_folder, imported_corpus, load_corpus

from ._pdf import text_pdf


def _notes(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "lakes.md").write_text(
        "---\ntitle: Great Lakes notes\nlang: fr\n---\n# Ignored\n\nLake Superior is deep.\n",
        encoding="utf-8",
    )
    (root / "heading.md").write_text("Intro line.\n\n## Second\n# First\n\nBody.", encoding="utf-8")
    (root / "sub" / "team-meeting_notes.txt").write_text("Meetings are on Tuesdays.", "utf-8")
    (root / "sub" / "coffee.html").write_text(
        "<html lang='de'><head><title>Kaffee &amp; Tee</title><style>p{}</style></head>"
        "<body><h1>Ignored</h1><p>Die Maschine steht im <b>zweiten</b> Stock.</p>"
        "<script>alert(1)</script></body></html>",
        encoding="utf-8",
    )
    (root / "hours.pdf").write_bytes(text_pdf("The library opens at 8 am.", title="Library hours"))
    (root / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    (root / "empty.txt").write_text("  \n", encoding="utf-8")
    (root / ".hidden.md").write_text("# Secret", encoding="utf-8")
    return root


def test_titles_text_urls_ids_and_languages(tmp_path: Path) -> None:
    result = import_folder(_notes(tmp_path / "notes"))
    docs = {doc.entity_id: doc for doc in result.documents}
    assert sorted(docs) == [
        "heading.md",
        "hours.pdf",
        "lakes.md",
        "sub:coffee.html",
        "sub:team-meeting_notes.txt",
    ]
    lakes = docs["lakes.md"]
    assert lakes.default_langcode == "fr"
    assert lakes.translations["fr"].title == "Great Lakes notes"
    assert lakes.translations["fr"].url == "lakes.md"
    assert "title:" not in lakes.translations["fr"].content
    assert docs["heading.md"].translations["en"].title == "First"  # the highest level wins
    assert docs["sub:team-meeting_notes.txt"].translations["en"].title == "team meeting notes"
    coffee = docs["sub:coffee.html"].translations["de"]
    assert coffee.title == "Kaffee & Tee"
    assert coffee.content == "Ignored\n\nDie Maschine steht im zweiten Stock."
    assert coffee.url == "sub/coffee.html"
    pdf = docs["hours.pdf"].translations["en"]
    assert (pdf.title, pdf.content) == ("Library hours", "The library opens at 8 am.")
    assert docs["hours.pdf"].fields == {"path": "hours.pdf", "format": "pdf"}
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("empty.txt", "no text"),
        ("picture.png", "unsupported file type '.png'"),
    ]
    assert result.files == 7  # the hidden file is not looked at


def test_ids_are_stable_and_colliding_paths_get_a_hash(tmp_path: Path) -> None:
    root = tmp_path / "n"
    root.mkdir()
    (root / "a b.md").write_text("# A\n\ntext one", encoding="utf-8")
    (root / "a-b.md").write_text("# B\n\ntext two", encoding="utf-8")
    first = [d.entity_id for d in import_folder(root).documents]
    assert first == [d.entity_id for d in import_folder(root).documents]
    assert first[0] == "a-b.md"
    assert first[1].startswith("a-b.md-")
    assert len(set(first)) == 2


def test_base_url_prefixes_the_paths(tmp_path: Path) -> None:
    root = _notes(tmp_path / "notes")
    docs = import_folder(root, base_url="https://wiki.example/notes/").documents
    assert {d.translations[d.default_langcode].url for d in docs} >= {
        "https://wiki.example/notes/sub/coffee.html"
    }


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "unreadable PDF"),
        ("blob.txt", b"abc\0\0\0def", "binary file"),
        ("latin.md", "Caf\xe9".encode("latin-1"), "not UTF-8 text"),
        ("scan.pdf", text_pdf(""), "no text layer"),
    ],
)
def test_bad_files_stop_the_import_naming_them(
    tmp_path: Path, name: str, data: bytes, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _notes(tmp_path / "notes")
    (root / name).write_bytes(data)
    out = tmp_path / "corpus.jsonl"
    assert main(["corpus", "import", str(root), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{name}: {reason}" in err
    assert "nothing written" in err
    assert not out.exists()
    assert list(tmp_path.glob(".corpus.jsonl.*")) == []  # no temporary file left behind
    assert main(["corpus", "import", str(root), "-o", str(out), "--skip-bad"]) == 0
    assert f"skipped {name}: {reason}" in capsys.readouterr().err
    assert len(load_corpus(out)) == 5


def test_a_failed_import_leaves_an_existing_corpus_alone(tmp_path: Path) -> None:
    root = tmp_path / "n"
    root.mkdir()
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 broken")
    (root / "ok.md").write_text("# Ok\n\nfine", encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    out.write_text("previous\n", encoding="utf-8")
    assert main(["corpus", "import", str(root), "-o", str(out)]) == 2
    assert out.read_text(encoding="utf-8") == "previous\n"


def test_an_empty_folder_and_a_missing_one_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "photo.jpg").write_bytes(b"\xff\xd8")
    assert main(["corpus", "import", str(empty), "-o", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "holds no document to import" in err
    assert "unsupported file type '.jpg'" in err
    assert ".md" in err
    with pytest.raises(InvalidInput, match="is not a folder"):
        import_folder(tmp_path / "missing")


def test_the_cli_writes_a_corpus_that_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "corpus.jsonl"
    assert main(["corpus", "import", str(_notes(tmp_path / "notes")), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "imported 5 documents from 7 files" in err
    assert "skipped picture.png: unsupported file type '.png'" in err
    assert len(load_corpus(out)) == 5


def test_a_bad_entity_type_is_an_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _notes(tmp_path / "notes")
    assert (
        main(
            ["corpus", "import", str(root), "-o", str(tmp_path / "c.jsonl"), "--entity-type", "a b"]
        )
        == 2
    )
    assert "entity_type" in capsys.readouterr().err


def test_a_folder_corpus_is_imported_once_per_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))
    root = _notes(tmp_path / "notes")
    first = resolve_corpus_path(str(root))
    assert first.parent == tmp_path / "cache" / "imports"
    stamp = first.stat().st_mtime_ns
    assert resolve_corpus_path(str(root)) == first
    assert first.stat().st_mtime_ns == stamp  # read back, not imported again
    (root / "new.md").write_text("# New\n\nA new note.", encoding="utf-8")
    second = resolve_corpus_path(str(root))
    assert second != first
    assert len(load_corpus(second)) == 6
    assert imported_corpus(root) == second


def test_a_folder_corpus_with_a_bad_file_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citelab import ConfigError

    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))
    root = _notes(tmp_path / "notes")
    (root / "broken.pdf").write_bytes(b"%PDF broken")
    with pytest.raises(ConfigError, match=r"broken\.pdf: unreadable PDF"):
        resolve_corpus_path(str(root))
    assert not list((tmp_path / "cache" / "imports").glob("*.jsonl"))


def test_jsonl_errors_show_a_correct_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"entity_type": "page"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        load_corpus(bad)
    message = str(caught.value)
    assert "bad.jsonl:1" in message
    assert EXAMPLE_LINE in message
    good = tmp_path / "good.jsonl"
    good.write_text(EXAMPLE_LINE + "\n", encoding="utf-8")
    [document] = load_corpus(good)
    assert json.loads(EXAMPLE_LINE)["entity_id"] == document.entity_id


def test_an_agents_file_names_a_folder_relative_to_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citelab.agent import load_agents

    monkeypatch.setenv("CITELAB_CACHE_DIR", str(tmp_path / "cache"))
    _notes(tmp_path / "project" / "notes")
    agents_file = tmp_path / "project" / "agents.toml"
    agents_file.write_text('[agents.mine]\ncorpus = "./notes"\n', encoding="utf-8")
    [agent] = load_agents(agents_file).values()
    assert agent.corpus == str((tmp_path / "project" / "notes").resolve())
    assert len(load_corpus(resolve_corpus_path(agent.corpus))) == 5
