"""Bundled agent configuration files (package data): ``default.toml`` defines the agents that
run with no configuration — ``default`` and one per fixture corpus. Load them with
``citelab.agent.default_agents()``."""
