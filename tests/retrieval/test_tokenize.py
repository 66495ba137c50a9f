from citelab.retrieval import Tokenizer


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


def test_signature_is_stable() -> None:
    signature = Tokenizer().signature
    assert signature == Tokenizer().signature
    assert len(signature) == 16
    int(signature, 16)
