"""The Python renderer and the JS front end sanitize with the same allowlists."""

import json
from pathlib import Path

from citelab.contract import ALLOWLISTS

ROOT = Path(__file__).resolve().parents[2]


def test_js_allowlists_equal_the_python_ones() -> None:
    js_lists = json.loads(
        (ROOT / "js" / "contract" / "allowlists.json").read_text(encoding="utf-8")
    )
    assert js_lists == json.loads(json.dumps(ALLOWLISTS))
