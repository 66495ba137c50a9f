"""The front end in a real browser: Debian's chromium driven by Playwright.

The harness page and the bundles are served from memory (``page.route``) on a loopback
origin; a fake anywidget model in the page plays the kernel's event stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "src" / "citelab" / "static"
ARTIFACTS = ROOT / "test-artifacts"
ORIGIN = "http://127.0.0.1:8765"

HARNESS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>citelab harness</title>
<link rel="stylesheet" href="/static/citelab.css"></head>
<body><main id="chat"></main><aside id="panel"></aside><section id="message"></section>
<script type="module">
class FakeModel {
  constructor(traits) {
    this.traits = {_model_key: crypto.randomUUID().replaceAll("-", ""), ...traits};
    this.handlers = {};
    this.sent = [];
  }
  get(name) { return this.traits[name]; }
  set(name, value) { this.traits[name] = value; this.emit("change:" + name); }
  on(name, handler) { (this.handlers[name] ??= new Set()).add(handler); }
  off(name, handler) { this.handlers[name]?.delete(handler); }
  emit(name, ...args) { for (const handler of [...this.handlers[name] ?? []]) handler(...args); }
  send(message) { this.sent.push(message); }
  // anywidget gives initialize() and every render() a proxy object of their own.
  proxy() {
    return {get: (n) => this.get(n), set: (n, v) => this.set(n, v), send: (m) => this.send(m),
            on: (n, h) => this.on(n, h), off: (n, h) => this.off(n, h)};
  }
}
const chat = (await import("/static/widget_chat.js")).default;
const sources = (await import("/static/widget_sources.js")).default;
const message = (await import("/static/widget_message.js")).default;
const chatModel = new FakeModel(
  {turns: [], feedback_enabled: true, placeholder: "Ask", show_sources: true});
const panelModel = new FakeModel({turns: [], heading: "Panel sources"});
chat.initialize({model: chatModel.proxy()});
sources.initialize({model: panelModel.proxy()});
chat.render({model: chatModel.proxy(), el: document.getElementById("chat")});
sources.render({model: panelModel.proxy(), el: document.getElementById("panel")});
window.chatModel = chatModel;
window.openChatView = () => {
  const el = document.createElement("div");
  el.className = "second-view";
  document.body.append(el);
  chat.render({model: chatModel.proxy(), el});
};
window.play = async (messages, delay) => {
  for (const m of messages) {
    chatModel.emit("msg:custom", m);
    panelModel.emit("msg:custom", m);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
};
window.showMessage = (wire, violations = []) => {
  const model = new FakeModel({message: wire, violations});
  message.initialize({model: model.proxy()});
  message.render({model: model.proxy(), el: document.getElementById("message")});
  window.messageModel = model;
};
window.harnessReady = true;
</script></body></html>
"""

ANSWER = (
    "## Evening study rooms\n\n"
    "Rooms in the Harbour Library stay open until 23:00 on weekdays [1]. "
    "Students book them in the campus app [2].\n\n"
    "- Late access needs a staff card [1][3]\n"
    "- Group rooms seat four to eight people [2]\n\n"
    "| Room | Seats |\n|:--|--:|\n| A | 4 |\n| B | 8 |\n\n"
    "Exam weeks keep the café open late ☕ [3]."
)
REFERENCES = [
    {
        "number": n,
        "entity_type": "node",
        "entity_id": str(100 + n),
        "uri": f"entity:node/{100 + n}",
        "title": title,
        "url": f"https://campus.example/node/{100 + n}",
        "langcode": "en",
        "snippet": f"About {title.lower()}.",
    }
    for n, title in enumerate(["Opening hours", "Booking a room", "Exam weeks"], start=1)
]


def turn_messages() -> list[dict[str, Any]]:
    turn = "t1"
    messages: list[dict[str, Any]] = [
        {"type": "turn_start", "turn_id": turn, "question": "Evening rooms?", "followup": False},
        {"type": "references", "turn_id": turn, "references": REFERENCES},
    ]
    messages += [
        {"type": "token", "turn_id": turn, "text": ANSWER[i : i + 5]}
        for i in range(0, len(ANSWER), 5)
    ]
    messages.append(
        {
            "type": "done",
            "turn_id": turn,
            "text": ANSWER,
            "references": REFERENCES,
            "suggested_replies": [
                {"label": "How do I book?", "message": "How do I book a group room?"},
                {"label": "Thanks"},
            ],
            "message": {},
            "conversation_id": "c1",
            "turn": 1,
            "log_id": "log-1",
            "no_answer": False,
        }
    )
    return messages


class Session:
    """One page with the harness, recording every request and every error."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 900, "height": 1100})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console",
            lambda msg: self.errors.append(msg.text) if msg.type in ("error", "warning") else None,
        )
        self.page.route("**/*", self.serve)
        self.page.goto(f"{ORIGIN}/harness.html")
        self.page.wait_for_function("window.harnessReady === true")

    def serve(self, route: Any) -> None:
        path = urlsplit(route.request.url).path
        if route.request.url.startswith(ORIGIN) and path == "/harness.html":
            route.fulfill(status=200, content_type="text/html", body=HARNESS)
        elif route.request.url.startswith(ORIGIN) and path.startswith("/static/"):
            file = STATIC / path.removeprefix("/static/")
            kind = "text/css" if file.suffix == ".css" else "text/javascript"
            route.fulfill(status=200, content_type=kind, body=file.read_bytes())
        else:
            route.abort()

    def close(self) -> None:
        self.page.close()
        outside = [url for url in self.requests if urlsplit(url).hostname != "127.0.0.1"]
        assert outside == [], f"requests left loopback: {outside}"
        assert self.errors == [], f"page errors: {self.errors}"


@pytest.fixture
def session(browser: Any) -> Iterator[Session]:
    opened = Session(browser)
    yield opened
    opened.close()


def test_chat_streams_links_sources_and_asks_from_a_chip(session: Session) -> None:
    page = session.page
    page.evaluate("([messages]) => window.play(messages, 2)", [turn_messages()])
    page.wait_for_selector('#chat .citelab-turn[data-status="done"]')

    answer = page.locator("#chat .citelab-answer")
    assert "stay open until 23:00 on weekdays" in answer.inner_text()
    assert page.locator("#chat .citelab-answer table td[data-align='right']").count() == 2
    cards = page.locator("#chat li.citelab-source")
    assert cards.count() == 3
    assert page.locator("#panel li.citelab-source").count() == 3
    for link in cards.locator("a").all():
        assert link.get_attribute("target") == "_blank"
        assert link.get_attribute("rel") == "noopener noreferrer"

    marker = page.locator('#chat .citelab-answer a[data-ref-index="2"]').first
    target = marker.get_attribute("href")
    assert target is not None
    marker.click()
    focused = page.evaluate("document.activeElement.id")
    assert f"#{focused}" == target
    title = page.locator(f"#chat {target} .citelab-source-title").inner_text()
    assert title.startswith("Booking a room")
    panel_target = page.locator("#panel li.citelab-source-target").first
    assert panel_target.locator(".citelab-source-title").inner_text().startswith("Booking")

    page.get_by_role("button", name="How do I book?").click()
    sent = page.evaluate("window.chatModel.sent")
    asks = [message for message in sent if message["type"] == "ask"]
    assert len(asks) == 1
    assert asks[0]["question"] == "How do I book a group room?"
    assert asks[0]["followup"] is True
    assert isinstance(asks[0]["request_id"], str)

    page.get_by_role("button", name="Helpful", exact=True).click()
    feedback = [m for m in page.evaluate("window.chatModel.sent") if m["type"] == "feedback"]
    assert feedback[0]["turn_id"] == "t1"
    assert feedback[0]["value"] == "up"

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "frontend-chat.png"), full_page=True)


def test_keyboard_reaches_the_question_box_and_the_chips(session: Session) -> None:
    page = session.page
    page.evaluate("([messages]) => window.play(messages, 0)", [turn_messages()])
    page.wait_for_selector('#chat .citelab-turn[data-status="done"]')
    # Once there is a conversation the question box hides: the follow-up box continues it.
    assert page.get_by_label("Question", exact=True).is_hidden()
    page.get_by_label("Follow-up question", exact=True).focus()
    page.keyboard.type("Where is the library?")
    page.keyboard.press("Enter")
    chip = page.get_by_role("button", name="Thanks")
    chip.focus()
    page.keyboard.press("Enter")
    asks = [m for m in page.evaluate("window.chatModel.sent") if m["type"] == "ask"]
    assert [(m["question"], m["followup"]) for m in asks] == [
        ("Where is the library?", True),
        ("Thanks", True),
    ]


def test_message_view_highlights_cited_spans_with_emoji_offsets(session: Session) -> None:
    page = session.page
    text = "Café ☕ opens 👩‍🔬 early [1]. The Seine is near [2]."
    cited = "The Seine is near"
    start = len(text[: text.index(cited)])  # Python str indexes code points
    wire = {
        "role": "assistant",
        "content": [
            {
                "type": "text",
                "text": text,
                "_meta": {
                    "drupal.org/ai.citations": [
                        {
                            "sourceUri": "https://example.org/seine",
                            "citedText": cited,
                            "startIndex": start,
                            "endIndex": start + len(cited),
                        }
                    ]
                },
            },
            {
                "type": "resource_link",
                "uri": "entity:node/1",
                "name": "cafe",
                "title": "Café",
                "annotations": {"priority": 1},
            },
            {
                "type": "resource_link",
                "uri": "https://example.org/seine",
                "name": "seine",
                "title": "The Seine",
                "annotations": {"priority": 0.5},
            },
        ],
    }
    page.evaluate(f"window.showMessage({json.dumps(wire)})")
    assert page.locator("#message mark.citelab-cited").all_inner_texts() == [cited]
    page.locator("#message li.citelab-source").nth(1).hover()
    assert page.locator("#message mark.citelab-cited-active").count() == 1
    # The text's own [2] links to the second source; no footnote repeats it beside it (#24).
    assert page.locator("#message .citelab-footnote").count() == 0
    second = page.locator("#message li.citelab-source").nth(1).get_attribute("id")
    marker = page.locator('#message .citelab-answer a[data-ref-index="2"]')
    assert marker.get_attribute("href") == f"#{second}"
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#message").screenshot(path=str(ARTIFACTS / "frontend-message.png"))


def test_a_view_opened_mid_stream_through_another_proxy_shows_every_token(
    session: Session,
) -> None:
    page = session.page
    messages = turn_messages()
    half = len(messages) // 2
    page.evaluate("([messages]) => window.play(messages, 0)", [messages[:half]])
    page.evaluate("window.openChatView()")
    same = """() => {
      const [first, second] = [...document.querySelectorAll('.citelab-answer')];
      return second && second.textContent.includes('Evening study rooms')
        && second.textContent === first.textContent;
    }"""
    page.wait_for_function(same)
    assert page.locator(".second-view .citelab-turn").get_attribute("data-status") == "streaming"
    page.evaluate("([messages]) => window.play(messages, 0)", [messages[half:]])
    page.wait_for_selector('.second-view .citelab-turn[data-status="done"]')
    first = page.locator("#chat .citelab-answer").inner_text()
    assert page.locator(".second-view .citelab-answer").inner_text() == first


def test_message_view_lists_violations_under_a_warning_that_opens(session: Session) -> None:
    page = session.page
    wire = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Fees are due in May [1]."},
            {"type": "resource_link", "uri": "entity:node/5", "name": "fees", "title": "Fees"},
        ],
    }
    violations = [
        {
            "path": 'content[0]._meta["drupal.org/ai.citations"][0].sourceUri',
            "code": "unknown_source",
            "message": "<img src=x onerror=window.pwned=1> is not a listed source",
        },
        {"path": "content[1].annotations", "code": "missing_field", "message": "no priority"},
    ]
    page.evaluate(
        "([wire, violations]) => window.showMessage(wire, violations)", [wire, violations]
    )
    warning = page.locator("#message details.citelab-violations")
    summary = warning.locator("summary")
    assert summary.inner_text() == "2 contract violations"  # after an SVG warning icon
    items = warning.locator("li.citelab-violation")
    assert not items.first.is_visible()  # closed until opened
    summary.click()
    assert items.first.is_visible()
    assert "<img src=x onerror=window.pwned=1> is not a listed source" in items.first.inner_text()
    assert page.locator("#message img").count() == 0
    assert page.evaluate("window.pwned") is None
    assert page.locator("#message li.citelab-source").count() == 1  # the message still shows
    summary.press("Enter")  # a keyboard closes it again
    assert not items.first.is_visible()
