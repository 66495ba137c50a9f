// Shared builders for the front-end tests.

/** An anywidget-like model: traits, change events, custom messages both ways. */
export class FakeModel {
  constructor(traits = {}) {
    this.traits = { ...traits };
    this.handlers = new Map();
    this.sent = [];
  }

  get(name) {
    return this.traits[name];
  }

  set(name, value) {
    this.traits[name] = value;
    this.emit(`change:${name}`);
  }

  on(name, handler) {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name).add(handler);
  }

  off(name, handler) {
    this.handlers.get(name)?.delete(handler);
  }

  emit(name, ...args) {
    for (const handler of [...(this.handlers.get(name) ?? [])]) handler(...args);
  }

  /** Kernel → front end. */
  custom(message) {
    this.emit("msg:custom", message);
  }

  /** Front end → kernel. */
  send(message) {
    this.sent.push(message);
  }

  listenerCount(name) {
    return this.handlers.get(name)?.size ?? 0;
  }
}

/** Draw synchronously instead of once per animation frame. */
export const syncSchedule = (draw) => draw;

/** A reference as citelab.events.Reference serializes it. */
export function reference(number, fields = {}) {
  return {
    number,
    entity_type: "node",
    entity_id: String(number),
    uri: `entity:node/${number}`,
    title: `Source ${number}`,
    url: `https://example.org/node/${number}`,
    langcode: "en",
    snippet: `Snippet of source ${number}.`,
    ...fields,
  };
}

/** The kernel messages of one turn: start, references, the text in pieces, done. */
export function turnMessages(
  turnId,
  { question = "Q?", followup = false, text, references, pieces = 4, done = {} },
) {
  const messages = [{ type: "turn_start", turn_id: turnId, question, followup }];
  messages.push({ type: "references", turn_id: turnId, references });
  const size = Math.ceil(text.length / pieces);
  for (let i = 0; i < text.length; i += size) {
    messages.push({ type: "token", turn_id: turnId, text: text.slice(i, i + size) });
  }
  messages.push({
    type: "done",
    turn_id: turnId,
    text,
    references,
    suggested_replies: [],
    message: {},
    conversation_id: "c1",
    turn: 1,
    no_answer: false,
    ...done,
  });
  return messages;
}

/** A new container attached to the document (ids resolve, focus works). */
export function container() {
  const root = document.createElement("div");
  document.body.append(root);
  return root;
}

/** Every element, attribute and URL under `root` that the allowlists would not allow. */
export function disallowed(root, { tags, attributes }) {
  const problems = [];
  for (const node of root.querySelectorAll("*")) {
    const tag = node.localName;
    if (!tags.has(tag)) problems.push(`tag <${tag}>`);
    for (const { name, value } of node.attributes) {
      if (name.startsWith("on")) problems.push(`handler ${name} on <${tag}>`);
      if (!attributes(tag).has(name)) problems.push(`attribute ${name} on <${tag}>`);
      if ((name === "href" || name === "src" || name === "action") && badScheme(value)) {
        problems.push(`scheme in ${name}="${value}"`);
      }
    }
  }
  return problems;
}

/** A URL whose scheme is not http, https or mailto (after what browsers strip). */
export function badScheme(value) {
  const cleaned = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(cleaned);
  return Boolean(match) && !["http", "https", "mailto"].includes(match[1].toLowerCase());
}
