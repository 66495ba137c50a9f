"""Corpora of entities: documents with translations, fields and access rules."""

from citelab.corpus._corpus import Corpus, load_corpus
from citelab.corpus._model import Access, Document, Reader, Translation

__all__ = ["Access", "Corpus", "Document", "Reader", "Translation", "load_corpus"]
