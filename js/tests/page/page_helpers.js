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
    requests.push({ url, ...init, body: JSON.parse(init.body) });
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

export function page(responses, options = {}) {
  const root = document.createElement("div");
  root.id = `chat-${Math.random().toString(36).slice(2)}`;
  document.body.append(root);
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

