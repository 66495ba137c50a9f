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

  /**
   * A new proxy of this model, as anywidget hands to initialize() and to each render(): a
   * different object every time, whose listeners `dispose()` removes (a view's end).
   */
  proxy() {
    const added = new Set();
    return {
      get: (name) => this.get(name),
      set: (name, value) => this.set(name, value),
      send: (message) => this.send(message),
      on: (name, handler) => {
        added.add([name, handler]);
        this.on(name, handler);
      },
      off: (name, handler) => this.off(name, handler),
      widget_manager: this.widget_manager, // set one on the model to hand it to views
      dispose: () => {
        for (const [name, handler] of added) this.off(name, handler);
      },
    };
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

/** Run deferred work (ChatView's `slices`) to its end at once, instead of frame by frame. */
export function syncSlices(work) {
  while (!work(() => true));
  return () => {};
}

/**
 * ChatView's `slices` run by the test: `run(units)` gives every pending job one slice of
 * `units` steps; `pending` counts the jobs not done and not cancelled.
 */
export function manualSlices() {
  const jobs = new Set();
  const slices = (work) => {
    const job = { work };
    jobs.add(job);
    return () => jobs.delete(job);
  };
  slices.run = (units = 1) => {
    for (const job of [...jobs]) {
      let left = units;
      if (job.work(() => --left > 0)) jobs.delete(job);
    }
  };
  slices.finish = () => {
    let rounds = 0;
    while (jobs.size) {
      slices.run(1);
      rounds += 1;
    }
    return rounds;
  };
  Object.defineProperty(slices, "pending", { get: () => jobs.size });
  return slices;
}

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

// Documents where settling is subtle: every prefix must render as a full render would.
export const TRICKY = {
  "heading after a paragraph": "Foo\n#\n\nPara one\n# Heading\n\nPara two [1]\n",
  "ordered list grows across blank lines": "1. a\n\n2. b\n\n3. c\n\n2\n\nAfter the list.\n",
  "nested loose list": "- a\n  - b\n\n  c\n- d\n\ntext\n\n- e\n\n  - f\n",
  "definitions after their use": [
    "See [docs] and [x][y].",
    "",
    "More text [1].",
    "",
    '[docs]: https://example.org/docs "Docs"',
    "[y]: /relative",
    "",
    "End [docs] [y].",
    "",
  ].join("\n"),
  "definition title on the next line": "[a] and [b]\n\n[a]: /u\n'title\n\nstill'\n\n[b]: /v\n\nz\n",
  "fenced code with blank lines":
    "```js\nconst a = 1;\n\nconst b = [1];\n```\n\nAfter [1].\n\n~~~\nopen fence\n\n",
  tables: "| a | b |\n|:-:|--:|\n| 1 | 2 [3] |\n\n| c |\n\nnot | a table\n",
  "setext headings": "Title\n=====\n\nText\n---\n\nMore\n\n***\n\nLast",
  "indented code": "    code\n\n    more\n\ntext\n\n     deeper\n",
  blockquotes: "> quote\ncontinued\n\n> new\n\n>\n\nx",
  "crlf and cr": "a\r\n\r\nb\r\n\r\n- c\r\n- d\r\re\r\rf",
  citations:
    "Claim [1][2]. Range [2-4], list [1, 3].\n\nCode `[5]` link [1](http://x) foot [^1] ![2].\n",
  "raw html": "<script>alert(1)</script>\n\n<b>x</b> [1]\n\n<div>\n\nblock\n</div>\n",
  "emphasis across blocks": "**bold\n\ntext** and *more\n\n_x_\n",
  "list after heading without blank": "# H\n- a\n- b\n\n## H2\n1) x\n2) y\n\nend",
  "long paragraph then list": `${"word ".repeat(60)}\n\n- one [1]\n- two [2]\n\n${"more ".repeat(40)}`,
  "nul and odd whitespace": "a\u0000b\n\n \t\n\nc\u00a0[1]\n",
};

/** A Lumino-style signal: `connect(slot)`, `disconnect(slot)`; `emit(args)` calls slots. */
export class FakeSignal {
  constructor(sender = null) {
    this.sender = sender;
    this.slots = new Set();
  }

  connect(slot) {
    this.slots.add(slot);
  }

  disconnect(slot) {
    this.slots.delete(slot);
  }

  emit(args) {
    for (const slot of [...this.slots]) slot(this.sender, args);
  }
}
