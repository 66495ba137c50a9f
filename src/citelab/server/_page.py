"""The standalone page: a static shell the bundled front end (``static/page.js``) fills.

The shell carries configuration only, in ``data-`` attributes (the CSP forbids inline
script): the agent, the API base, the session's CSRF token, the agent's starter questions
(JSON) and whether a user is signed in. Answers never appear in it; they arrive through the
API, and so do the reader's recent conversations, which the front end lists in the shell's
``nav`` (``data-citelab-conversations-for``). An agent picker links to the page of every
enabled agent. Every value is HTML-escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from urllib.parse import quote

__all__ = ["access_denied_page", "render_page"]

_HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/citelab.css">
<link rel="stylesheet" href="/assets/page.css">
{script}</head>
"""

_PAGE = """<body class="citelab-page">
<header class="citelab-page-header">
<h1>citelab</h1>
<p>{who}</p>
{picker}</header>
<main class="citelab-page-main">
<section id="citelab-chat" aria-label="Questions, answers and sources" data-citelab-page
 data-api-base="" data-agent="{agent}" data-csrf-token="{csrf_token}"
 data-feedback-enabled="{feedback}" data-starters="{starters}" data-signed-in="{signed_in}">
<p class="citelab-page-loading">Loading the chat…</p>
<noscript>This page needs JavaScript. The API it uses is described at
<a href="/api/openapi.json">/api/openapi.json</a>.</noscript>
</section>
<nav class="citelab-page-recent" data-citelab-conversations-for="citelab-chat"
 aria-label="Recent conversations"></nav>
</main>
</body>
</html>
"""

_DENIED = """<body class="citelab-page">
<main class="citelab-page-main">
<h1>citelab</h1>
<p>{message}</p>
</main>
</body>
</html>
"""


def render_page(
    *,
    agent: str,
    csrf_token: str,
    user_id: str | None,
    feedback_enabled: bool,
    agents: Sequence[str] = (),
    starters: Sequence[str] = (),
) -> str:
    """The page for one agent and one browser session; ``agents`` are the picker's choices,
    ``starters`` the questions offered before the first one."""
    who = f"signed in as <strong>{escape(user_id)}</strong>" if user_id else "anonymous"
    head = _HEAD.format(
        title=escape(f"citelab · {agent}"),
        script='<script type="module" src="/static/page.js"></script>\n',
    )
    return head + _PAGE.format(
        agent=escape(agent),
        who=who,
        csrf_token=escape(csrf_token),
        feedback="true" if feedback_enabled else "false",
        starters=escape(json.dumps(list(starters))),
        signed_in="true" if user_id else "false",
        picker=_agent_picker(agent, agents),
    )


def _agent_picker(current: str, agents: Sequence[str]) -> str:
    """Links to each agent's page (the current one marked); plain links work without
    script."""
    names = list(agents) if current in agents else [current, *agents]
    links = []
    for name in names:
        label = escape(name)
        if name == current:
            links.append(f'<li><a href="?agent={quote(name)}" aria-current="page">{label}</a></li>')
        else:
            links.append(f'<li><a href="?agent={quote(name)}">{label}</a></li>')
    return (
        '<nav class="citelab-agents" aria-label="Agents"><span>Agent:</span>'
        f"<ul>{''.join(links)}</ul></nav>\n"
    )


def access_denied_page(message: str) -> str:
    """A page saying why the visitor cannot get in (no script)."""
    return _HEAD.format(title="citelab", script="") + _DENIED.format(message=escape(message))
