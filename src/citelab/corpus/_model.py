"""Documents are entities: a type, an id, per-language translations, fields and access rules."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

__all__ = ["Access", "Document", "Reader", "Translation"]


class Translation(BaseModel):
    """One language version of a document."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1)
    """The label shown for this entity in this language."""
    content: str = ""
    """The body text; may be empty for entities known only by their fields."""
    url: str | None = None
    """Where a reader can open this translation."""


class Access(BaseModel):
    """Who may read a document: everybody, or listed users and roles."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    public: bool = True
    """True when anybody, anonymous readers included, may read it."""
    users: frozenset[str] = frozenset()
    """User ids allowed to read it when it is not public."""
    roles: frozenset[str] = frozenset()
    """Roles allowed to read it when it is not public."""

    @field_serializer("users", "roles")
    def _sorted(self, names: frozenset[str]) -> list[str]:
        # Sorted, not in set order (which depends on PYTHONHASHSEED): the corpus hash and
        # every saved copy of a document must be the same in every process.
        return sorted(names)

    def allows(self, reader: Reader) -> bool:
        if self.public:
            return True
        if reader.user_id is not None and reader.user_id in self.users:
            return True
        return bool(self.roles & reader.roles)


class Reader(BaseModel):
    """Who is asking: their user id (None when anonymous), roles and preferred language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str | None = None
    """The user's id; None for an anonymous reader."""
    roles: frozenset[str] = frozenset()
    """Roles granting access to restricted documents."""
    langcode: str = "en"
    """The reader's current content language."""

    @classmethod
    def anonymous(cls, langcode: str = "en") -> Reader:
        return cls(langcode=langcode)


class Document(BaseModel):
    """An entity of the corpus with its translations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entity_type: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """The kind of entity, e.g. ``node`` or ``program``."""
    entity_id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    """The entity's id, unique within its type."""
    default_langcode: str = "en"
    """The language of the original version; must be one of ``translations``."""
    translations: dict[str, Translation]
    """Language versions keyed by langcode."""
    fields: dict[str, Any] = Field(default_factory=dict)
    """Free fields, e.g. ``{"degree": "MSc", "faculty": "Science"}``."""
    access: Access = Access()
    """Who may read it."""
    kind: Literal["document"] = "document"

    @field_validator("translations")
    @classmethod
    def _not_empty(cls, value: dict[str, Translation]) -> dict[str, Translation]:
        if not value:
            raise ValueError("a document needs at least one translation")
        return value

    @model_validator(mode="after")
    def _default_present(self) -> Document:
        if self.default_langcode not in self.translations:
            raise ValueError(
                f"default_langcode {self.default_langcode!r} has no translation "
                f"(have {sorted(self.translations)})"
            )
        return self

    @property
    def key(self) -> tuple[str, str]:
        return (self.entity_type, self.entity_id)

    @property
    def uri(self) -> str:
        return f"entity:{self.entity_type}/{self.entity_id}"

    def translation(self, langcode: str | None) -> tuple[str, Translation]:
        """The translation in ``langcode`` if it exists, else the default one."""
        if langcode is not None and langcode in self.translations:
            return langcode, self.translations[langcode]
        return self.default_langcode, self.translations[self.default_langcode]

    def readable_by(self, reader: Reader) -> bool:
        return self.access.allows(reader)
