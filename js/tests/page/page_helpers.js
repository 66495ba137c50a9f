// Builders for the page tests: SSE bodies, a recording fetch, a mounted page.
import { mountPage } from "../../entries/page.js";
import { syncSchedule } from "../helpers.js";

export function sseBody(events) {
  const text = events
    .map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 17) controller.enqueue(bytes.slice(i, i + 17));
      controller.close();
    },
  });
}

export function fakeFetch(responses) {
  const requests = [];
  const fetch = async (url, init) => {
    requests.push({ url, ...init, body: init.body === undefined ? undefined : JSON.parse(init.body) });
    const next = responses.shift();
    return typeof next === "function" ? next() : next;
  };
  return { fetch, requests };
}

export const DONE = (text, references, extra = {}) => ({
  text,
  references,
  suggested_replies: [{ label: "More" }],
  message: {},
  conversation_id: "conv-1",
  turn: 1,
  no_answer: false,
  ...extra,
});

export async function settle() {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve));
}

export function page(responses, { before = null, ...options } = {}) {
  const root = document.createElement("div");
  root.id = `chat-${Math.random().toString(36).slice(2)}`;
  document.body.append(root);
  if (before) {
    before.dataset.citelabConversationsFor = root.id;
    document.body.append(before);
  }
  const { fetch, requests } = fakeFetch(responses);
  const mounted = mountPage(root, {
    apiBase: "http://127.0.0.1:8000/",
    agent: "campus",
    csrfToken: "tok",
    fetch,
    schedule: syncSchedule,
    storage: null, // no sessionStorage shared between tests (page_ui.test.js tests it)
    ...options,
  });
  return { root, requests, mounted };
}


/** A JSON response. */
export function json(body, status = 200) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

/** A page root with a recent conversations list beside it (as the server's shell has). */
export function pageWithRecent(responses, options = {}) {
  const nav = document.createElement("nav");
  const mounted = page(responses, { ...options, before: nav });
  return { ...mounted, nav };
}
