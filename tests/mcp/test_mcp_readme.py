"""The README's MCP client configuration is valid JSON naming a command line citelab accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from citelab.agent import default_agents
from citelab.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_client_configuration_starts_the_mcp_server() -> None:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    [config] = [json.loads(block) for block in blocks if "mcpServers" in block]
    server = config["mcpServers"]["citelab"]
    assert server["command"] == "citelab"
    args = build_parser().parse_args(server["args"])
    assert args.command == "mcp"
    assert args.agent in default_agents()
