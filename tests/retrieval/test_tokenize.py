import pytest

from citelab.retrieval import Tokenizer, _tokenize


def test_terms_are_lowercase_unicode_words() -> None:
    terms = Tokenizer().terms("Straße, CAFÉ-Öffnung (120 ECTS)!", "xx")
    assert terms == ["straße", "café", "öffnung", "120", "ects"]


def test_composed_and_decomposed_accents_and_ligatures_agree() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.terms("cafe\u0301 \ufb01le", "en") == tokenizer.terms("café file", "en")


def test_stopwords_depend_on_the_language() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.terms("die Katze und der Hund", "de") == ["katze", "hund"]
    assert tokenizer.terms("the die is cast", "en") == ["die", "cast"]
    assert tokenizer.terms("la maison et le jardin", "fr") == ["maison", "jardin"]
    assert tokenizer.terms("die Katze", "de-CH") == ["katze"]


def test_an_unrestricted_query_drops_every_languages_stopwords() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.terms("the die et la Katze", None) == ["katze"]
    assert tokenizer.stopwords(None) >= tokenizer.stopwords("de") | tokenizer.stopwords("fr")


def test_a_language_without_a_list_keeps_every_word() -> None:
    assert Tokenizer().terms("the die", "xx") == ["the", "die"]


GOLDEN = [
    (
        "The semester fee is 320 euros and it includes the public transport ticket.",
        "en",
        ["semester", "fee", "320", "euros", "includes", "public", "transport", "ticket"],
    ),
    (
        "Die Bewerbung für den Masterstudiengang endet am 15. Juli; danach ist keine "
        "Einschreibung möglich.",
        "de",
        ["bewerbung", "masterstudiengang", "endet", "15", "juli", "danach", "einschreibung",
         "möglich"],
    ),
    (
        "Les étudiants doivent payer les frais avant la rentrée, sauf s'ils ont une bourse.",
        "fr",
        ["étudiants", "doivent", "payer", "frais", "avant", "rentrée", "sauf", "bourse"],
    ),
    (
        "De inschrijving sluit op 1 mei en het collegegeld is niet terugbetaalbaar.",
        "nl",
        ["inschrijving", "sluit", "1", "mei", "collegegeld", "terugbetaalbaar"],
    ),
    (
        "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３, naïve ﬁnance ２⁵ — e-mail: info@uni.example",
        "en",
        ["full", "width", "abc", "123", "naïve", "finance", "25", "e", "mail", "info", "uni",
         "example"],
    ),
    ("the semester fee and die Gebühr et les frais", None, ["semester", "fee", "gebühr", "frais"]),
]  # fmt: skip
"""Texts and the terms they must give. A change here changes every persisted index's terms:
bump ``TOKENIZER_VERSION`` (the signature then changes and the indexes are rebuilt)."""


@pytest.mark.parametrize(("text", "langcode", "terms"), GOLDEN, ids=[g[1] or "any" for g in GOLDEN])
def test_golden_texts_give_their_terms(text: str, langcode: str | None, terms: list[str]) -> None:
    assert Tokenizer().terms(text, langcode) == terms


def test_the_signature_follows_the_stopword_lists_and_the_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = Tokenizer().signature
    assert len(shipped) == 16
    int(shipped, 16)
    fewer = Tokenizer()
    fewer._stopwords = {**fewer._stopwords, "en": fewer._stopwords["en"] - {"the"}}
    assert fewer.signature != shipped
    monkeypatch.setattr(_tokenize, "TOKENIZER_VERSION", _tokenize.TOKENIZER_VERSION + 1)
    assert Tokenizer().signature != shipped
