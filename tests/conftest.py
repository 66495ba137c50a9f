"""What every test package shares: markers and xdist groups that come from the fixtures a
test uses, so nobody has to remember them.

A test that asks for the session's browser or JupyterLab (``tests/browser/conftest.py``) is
marked ``browser`` (and ``notebook`` for the lab) and ``slow``; one that runs the tour's
notebooks in kernels is ``notebook`` and ``slow``. ``make test-quick`` deselects them all.
Under ``--dist loadgroup`` the tests of one expensive fixture stay in one xdist worker, which
starts it once: every browser test shares one chromium and one JupyterLab, the notebooks run
once, and one Ray cluster and one wheel build serve their modules.
"""

from __future__ import annotations

import pytest

FIXTURE_MARKERS: dict[str, tuple[str, ...]] = {
    "browser": ("browser", "slow"),
    "running_lab": ("browser", "notebook", "slow"),
    "kernel_env": ("notebook", "slow"),
}
"""Fixture name → the markers every test using it (directly or through another) gets."""

FIXTURE_GROUPS: dict[str, str] = {
    "browser": "browser",
    "running_lab": "browser",
    "kernel_env": "notebooks",
    "cluster": "ray",
    "wheel": "wheel",
}
"""Fixture name → the xdist group of every test using it (one worker starts the fixture)."""


# First: xdist's worker reads the groups in its own hook of the same name.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, markers in FIXTURE_MARKERS.items():
            if fixture in used:
                for name in markers:
                    item.add_marker(name)
        groups = [group for fixture, group in FIXTURE_GROUPS.items() if fixture in used]
        if groups:
            item.add_marker(pytest.mark.xdist_group(groups[0]))
    # The session's browser runs last: Playwright's sync API keeps its event loop set as this
    # thread's running loop while the browser is open, so a test after it that calls
    # asyncio.run() in this thread would fail with "cannot be called from a running event loop".
    items[:] = sorted(items, key=_uses_the_browser)


def _uses_the_browser(item: pytest.Item) -> bool:
    return bool(BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())))


BROWSER_FIXTURES = frozenset({"browser", "running_lab"})
"""The session fixtures that hold Playwright's browser open."""


LOST_GROUP = pytest.StashKey[str]()
"""On a grouped test whose group xdist did not see: why it fails."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """In an xdist worker under ``--dist loadgroup``, every grouped test must carry its
    group in its node id (that is how xdist's scheduler sees it); else the groups are split
    silently and their fixtures start in every worker, so each such test fails, saying why."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            item.stash[LOST_GROUP] = (
                "--dist loadgroup did not take effect: this grouped test carries no group in "
                "its node id, so xdist split its group across the workers. pytest and "
                "pytest-xdist disagree on node ids (pytest-xdist#1386): install the versions "
                "pyproject.toml's dev extra names."
            )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if LOST_GROUP in item.stash:
        pytest.fail(item.stash[LOST_GROUP], pytrace=False)
