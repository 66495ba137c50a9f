"""Users files, token lookup and browser sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from citelab import ConfigError, InvalidInput
from citelab.server import MIN_TOKEN_CHARS, SessionStore, User, UserDirectory, load_users
from citelab.server._users import generate_token

ALICE = "alice-demo-token-2f9c41"
BOB = "bob-demo-token-77e0d3a"

TOML = f"""
[[users]]
id = "alice"
token = "{ALICE}"
roles = ["staff", "hr"]
langcode = "de"

[[users]]
id = "bob"
token = "{BOB}"
"""


def row(user_id: str, token: str) -> str:
    return f'[[users]]\nid = "{user_id}"\ntoken = "{token}"\n'


YAML = f"""
users:
  - id: alice
    token: {ALICE}
    roles: [staff, hr]
    langcode: de
  - id: bob
    token: {BOB}
"""


@pytest.mark.parametrize(("name", "text"), [("users.toml", TOML), ("users.yaml", YAML)])
def test_a_users_file_maps_tokens_to_readers(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    users = load_users(path)
    assert [user.id for user in users] == ["alice", "bob"]
    alice = users.find(ALICE)
    assert alice is not None
    assert alice.reader.user_id == "alice"
    assert alice.reader.roles == frozenset({"staff", "hr"})
    assert alice.reader.langcode == "de"
    bob = users.find(BOB)
    assert bob is not None
    assert bob.reader.roles == frozenset()


def test_find_refuses_every_other_token() -> None:
    users = UserDirectory([User(id="alice", token=ALICE), User(id="bob", token=BOB)])
    for wrong in ["", ALICE[:-1], ALICE + "x", ALICE.upper(), BOB + ALICE, "\udcff"]:
        assert users.find(wrong) is None
    assert UserDirectory([]).find(ALICE) is None


def test_tokens_stay_out_of_reprs_and_errors(tmp_path: Path) -> None:
    assert ALICE not in repr(User(id="alice", token=ALICE))
    path = tmp_path / "users.toml"
    path.write_text('[[users]]\nid = "eve"\ntoken = "hunter2"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_users(path)
    message = str(caught.value)
    assert f"{path}: users[0].token: Value error, must be at least {MIN_TOKEN_CHARS}" in message
    assert "hunter2" not in message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            f'[[users]]\nid = "a"\ntoken = "{ALICE}"\n[[users]]\nid = "a"\ntoken = "{BOB}"\n',
            "repeated: ['a']",
        ),
        (
            f'[[users]]\nid = "a"\ntoken = "{ALICE}"\n[[users]]\nid = "b"\ntoken = "{ALICE}"\n',
            "['a', 'b'] share a token",
        ),
        (f'[[users]]\nid = "a b"\ntoken = "{ALICE}"\n', "users[0].id: String should match"),
        (f'[[users]]\nid = "a"\ntoken = "{ALICE}"\nadmin = true\n', "users[0].admin: Extra inputs"),
        ("user = []\n", "unknown top-level key(s) ['user']"),
        ("users = []\n", "at least one user"),
        ("users = [1]\n", "users[0] must be a table, got int"),
        ("users = [\n", "cannot parse the users file"),
    ],
)
def test_users_file_errors_name_the_file_and_key(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "users.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_users(path)
    assert str(path) in str(caught.value)
    assert says in str(caught.value)
    assert ALICE not in str(caught.value)


def test_users_file_must_exist_and_be_toml_or_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the users file"):
        load_users(tmp_path / "missing.toml")
    other = tmp_path / "users.json"
    other.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"must be \.toml, \.yaml or \.yml"):
        load_users(other)


def test_single_user_directory_and_its_short_token_error() -> None:
    token = generate_token()
    assert len(token) == 48
    user = UserDirectory.single(token).find(token)
    assert user is not None
    assert user.id == "local"
    with pytest.raises(
        InvalidInput, match=f"token: Value error, must be at least {MIN_TOKEN_CHARS}"
    ):
        UserDirectory.single("demo")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_sessions_expire_and_the_oldest_make_room() -> None:
    clock = FakeClock()
    store = SessionStore(ttl_seconds=60, per_user=2, clock=clock)
    alice = User(id="alice", token=ALICE).reader
    first, second = store.open(alice), store.open(alice)
    assert first.id != second.id
    assert first.csrf_token != second.csrf_token
    assert store.get(first.id) == first
    third = store.open(alice)
    assert store.get(first.id) is None  # evicted: a user holds at most two
    assert store.get(third.id) == third
    clock.now += 60
    assert store.get(second.id) is None
    assert len(store) == 1
    store.close(third.id)
    assert store.get(third.id) is None
    assert store.get(None) is None


def test_csrf_tokens_must_match_exactly() -> None:
    session = SessionStore().open(User(id="alice", token=ALICE).reader)
    assert session.csrf_matches(session.csrf_token)
    assert not session.csrf_matches(None)
    assert not session.csrf_matches("")
    assert not session.csrf_matches(session.csrf_token[:-1])
