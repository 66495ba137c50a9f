"""Who may use a server: users with their tokens and roles, found by token in constant time.

A users file (TOML or YAML) lists demo users, so a teacher can show the owner rules and the
access rules of a corpus with two browsers::

    [[users]]
    id = "alice"
    token = "alice-demo-token-2f9c41"   # at least 16 characters
    roles = ["staff", "hr"]
    langcode = "en"                     # optional: the reader's content language

Every error names the file and the key (``users[1].token``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from citelab._errors import ConfigError, InvalidInput
from citelab._validation import validation_problems
from citelab.corpus import Reader

__all__ = ["MIN_TOKEN_CHARS", "User", "UserDirectory", "generate_token", "load_users"]

MIN_TOKEN_CHARS = 16
"""Shortest token accepted: shorter ones are guessable."""


def generate_token() -> str:
    """A fresh random token (48 hex digits, like Jupyter's)."""
    return secrets.token_hex(24)


class User(BaseModel):
    """One user of a server: the identity that owns conversations, and what they may read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")
    """The user id conversations are owned by."""
    token: SecretStr
    """The secret the user presents (``Authorization: Bearer`` or ``/?token=``)."""
    roles: frozenset[str] = frozenset()
    """Roles granting access to restricted documents."""
    langcode: str = Field(default="en", min_length=2, max_length=12)
    """The user's content language."""

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr) -> SecretStr:
        length = len(value.get_secret_value())
        if length < MIN_TOKEN_CHARS:
            raise ValueError(f"must be at least {MIN_TOKEN_CHARS} characters long, not {length}")
        return value

    @property
    def reader(self) -> Reader:
        """The reader the answer service and retrieval see for this user."""
        return Reader(user_id=self.id, roles=self.roles, langcode=self.langcode)


class UserDirectory:
    """The users of one server; :meth:`find` looks a token up without leaking timing."""

    def __init__(self, users: Iterable[User]) -> None:
        self._users = list(users)
        _check_unique(self._users)
        # Comparing fixed-length digests makes every comparison take the same time, whatever
        # the lengths of the stored and presented tokens.
        self._digests = [(_digest(user.token.get_secret_value()), user) for user in self._users]

    @classmethod
    def single(cls, token: str, user_id: str = "local", roles: Iterable[str] = ()) -> UserDirectory:
        """One user holding ``token`` (what ``citelab serve --token`` makes)."""
        try:
            user = User(id=user_id, token=SecretStr(token), roles=frozenset(roles))
        except ValidationError as exc:
            raise InvalidInput("\n".join(validation_problems(exc, ""))) from exc
        return cls([user])

    def find(self, token: str) -> User | None:
        """The user holding ``token``, or ``None``; compares against every user, always."""
        presented = _digest(token)
        found: User | None = None
        for digest, user in self._digests:
            if hmac.compare_digest(digest, presented) and found is None:
                found = user
        return found

    def __iter__(self) -> Iterator[User]:
        return iter(self._users)

    def __len__(self) -> int:
        return len(self._users)


def load_users(path: str | Path) -> UserDirectory:
    """Read users from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file."""
    path = Path(path)
    data = _read(path)
    unknown = sorted(set(data) - {"users"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key(s) {unknown}; expected 'users'")
    rows = data.get("users")
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f"{path}: key 'users' must be a list with at least one user")
    users = [_user(row, path, f"users[{index}]") for index, row in enumerate(rows)]
    try:
        return UserDirectory(users)
    except InvalidInput as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _user(row: Any, path: Path, key: str) -> User:
    if not isinstance(row, dict):
        raise ConfigError(f"{path}: {key} must be a table, got {type(row).__name__}")
    try:
        return User.model_validate(row)
    except ValidationError as exc:
        raise ConfigError("\n".join(validation_problems(exc, str(path), key=key))) from exc


def _check_unique(users: list[User]) -> None:
    ids = [user.id for user in users]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise InvalidInput(f"user ids must be unique; repeated: {repeated}")
    tokens = [user.token.get_secret_value() for user in users]
    if len(set(tokens)) != len(tokens):
        # Name the users, never the token.
        shared = sorted(u.id for u in users if tokens.count(u.token.get_secret_value()) > 1)
        raise InvalidInput(f"users {shared} share a token; every user needs their own")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the users file: {exc.strerror}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data: object = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise ConfigError(f"{path}: a users file must be .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot parse the users file: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the file must hold a mapping with key 'users'")
    return data
