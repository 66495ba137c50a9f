// Streaming-render benchmark, run inside Chromium by benchmarks/bench_streaming.py. The same
// answer and the same tokens through several renderers, side by side:
//   naive        re-render everything per token (markdown-it + DOMPurify + innerHTML)
//   seed         re-parse everything per token, sanitize each block, replace changed blocks
//   replace      ours before this benchmark's findings: parse only the unsettled tail (after
//                checking the whole text extends the last one), rebuild changed blocks
//   incremental  ours: parse only the unsettled tail (given only the new piece); a changed
//                block that only grew by plain text gets it appended (no sanitize), any
//                other changed block is sanitized and morphed
//   chat         ours as the widget runs it: the chat view (turn, citation links, Sources
//                list of 9 cards) drawing from its store, fed the tokens as kernel messages,
//                a hover card open while it streams, the cited spans marked after `done`
//                (in slices, one per frame, each timed as an update of its own)
//   chatPlain    the same chat view without the hover card and without anchors
//   morphOnly    ours, but given the whole text per update (the block view's changes alone)
//   parseOnly    the parse of ours alone (no DOM), for the breakdown
import { BlockView } from "../render/block_view.js";
import { ChatView } from "../views/chat_view.js";
import { frameSlices } from "../dom/frames.js";
import { markdownToHtml, renderBlocks } from "../render/markdown.js";
import { sanitizeToFragment, sanitizeToString } from "../render/sanitize.js";
import { ChatStore } from "../state/store.js";
import { BlockStream } from "../render/stream.js";

const WORDS = (
  "library rooms open evening students booking campus access card group seats exam weeks " +
  "hours weekday staff reserve whiteboard quiet floor cafe late holidays term service desk"
).split(" ");

/** A deterministic answer of about `chars` characters, shaped like model output. */
export function makeAnswer(chars) {
  let seed = 42;
  const pick = (n) => {
    seed = (seed * 48271) % 2147483647;
    return seed % n;
  };
  const sentence = () => {
    const words = Array.from({ length: 8 + pick(14) }, () => WORDS[pick(WORDS.length)]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    if (pick(3) === 0) words[2] = `**${words[2]}**`;
    if (pick(4) === 0) words[4] = `\`${words[4]}\``;
    return `${words.join(" ")} [${1 + pick(9)}].`;
  };
  const table = () => {
    const row = (i) => `| R${i} | ${4 + i} | ${18 + i}:00 [${1 + i}] |`;
    const rows = Array.from({ length: 4 }, (_, i) => row(i));
    return `| Room | Seats | Open |\n|:--|--:|:-:|\n${rows.join("\n")}`;
  };
  const parts = [];
  let length = 0;
  for (let section = 1; length < chars; section++) {
    const block =
      section % 7 === 0
        ? table()
        : section % 5 === 0
          ? Array.from({ length: 4 + pick(4) }, () => `- ${sentence()}`).join("\n")
          : section % 11 === 0
            ? "```\nbook --room R2 --from 18:00\n\nbook --list\n```"
            : section % 6 === 0
              ? `## Section ${section}`
              : Array.from({ length: 2 + pick(4) }, sentence).join(" ");
    parts.push(block);
    length += block.length + 2;
  }
  return parts.join("\n\n").slice(0, chars);
}

/** Split like a model's tokens: about four characters, words kept with their space. */
export function tokenize(text) {
  return text.match(/\s*[^\s]{1,4}|\s+/g) ?? [];
}

function fresh() {
  document.body.replaceChildren();
  const root = document.createElement("div");
  root.className = "citelab citelab-answer";
  document.body.append(root);
  return root;
}

/** Median time of one full render of `text` (parse, sanitize, innerHTML, layout). */
export function fullRender(text, runs = 15) {
  const root = fresh();
  const times = [];
  for (let i = 0; i < runs; i++) {
    root.replaceChildren();
    void root.offsetHeight;
    const start = performance.now();
    root.innerHTML = markdownToHtml(text);
    void root.offsetHeight;
    times.push(performance.now() - start);
  }
  return median(times);
}

// The block view as it was before the morph: a changed block's content is rebuilt.
class ReplacingBlockView extends BlockView {
  update(blocks) {
    blocks.forEach(({ html }, index) => {
      const item = this.items[index] ?? this.addItem();
      if (item.html === html) return;
      item.element.replaceChildren(sanitizeToFragment(html));
      item.html = html;
    });
    while (this.items.length > blocks.length) this.removeItem();
  }
}

const BENCH_REFERENCES = Array.from({ length: 9 }, (_, i) => ({
  number: i + 1,
  entity_type: "node",
  entity_id: String(i + 1),
  uri: `entity:node/${i + 1}`,
  title: `Room guide ${i + 1}`,
  detail: i % 2 ? "Main library" : "Law library",
  url: `https://library.example/rooms/${i + 1}`,
  snippet: "Opening hours, seats and how to book.",
  passage: "Group rooms can be booked for up to three hours a day.",
  restricted: i === 0,
}));

/** The answer's anchors as the pipeline writes them: each sentence cites its marker's source. */
export function anchorsOf(text) {
  const anchors = [];
  for (const match of text.matchAll(/[A-Z][^.[\]\n]*? \[(\d)\]/g)) {
    anchors.push({
      sourceUri: `entity:node/${match[1]}`,
      citedText: match[0],
      startIndex: match.index,
      endIndex: match.index + match[0].length,
    });
  }
  return anchors;
}

// The chat's slices as the widget runs them (one per animation frame), each one timed; with
// `layout` its layout is forced into its time (per token, as every update's is).
function timedSlices(log) {
  return (work) => {
    log.started = true;
    return frameSlices((hasTime) => {
      const start = performance.now();
      const done = work(hasTime);
      if (log.layout) void document.body.offsetHeight;
      log.times.push(performance.now() - start);
      if (done) {
        log.done = true;
        log.finished?.();
      }
      return done;
    });
  };
}

function chatRenderer({ hover, anchors }) {
  const store = new ChatStore();
  const slicing = { times: [], started: false, done: false, layout: false, finished: null };
  const host = {
    settings: () => ({ feedbackEnabled: true, placeholder: "Ask", showSources: true }),
    ask: async () => ({}),
    feedback: async () => ({}),
    stop: async () => ({}),
    newConversation: async () => ({}),
    copy: async () => {},
    document: async () => ({ error: "not in the benchmark" }),
  };
  // The benchmark draws (per token, or per animation frame) itself.
  const view = new ChatView(fresh(), store, host, {
    schedule: () => () => {},
    slices: timedSlices(slicing),
  });
  store.receive({ type: "turn_start", turn_id: "t1", question: "Rooms?", followup: false });
  store.receive({ type: "references", turn_id: "t1", references: BENCH_REFERENCES });
  let hovering = !hover;
  const update = (_text, piece) => {
    store.receive({ type: "token", turn_id: "t1", text: piece });
    view.draw();
    if (!hovering) {
      const link = view.root.querySelector(".citelab-answer a[data-ref-index][href]");
      if (link) {
        view.hoverCard.show(link);
        hovering = true;
      }
    }
  };
  // The turn's end: the final text and the cited sources; with anchors, the spans are then
  // marked in slices over the next frames (`settled` waits for them). `ending(text)` makes
  // the `done` event's message (what the kernel sends), before the end is timed.
  update.ending = (text) => {
    const meta = anchors ? { "drupal.org/ai.citations": anchorsOf(text) } : {};
    const message = { role: "assistant", content: [{ type: "text", text, _meta: meta }] };
    return { text, meta, message };
  };
  update.finish = ({ text, meta, message }) => {
    store.receive({
      type: "done",
      turn_id: "t1",
      text,
      references: BENCH_REFERENCES,
      suggested_replies: [],
      message,
    });
    view.draw();
    return { anchors: anchors ? meta["drupal.org/ai.citations"].length : 0 };
  };
  // Once every slice ran: the marks made and each slice's time (ms).
  update.settled = () =>
    new Promise((resolve) => {
      const result = () =>
        resolve({
          marks: view.root.querySelectorAll(".citelab-answer mark.citelab-cited").length,
          slices: slicing.times,
        });
      if (!slicing.started || slicing.done) result();
      else slicing.finished = result;
    });
  update.slicing = slicing;
  // After the end, a person points at the first marker again: its card, its spans
  // highlighted. An event of its own (not part of the turn's end), timed apart.
  update.point = () => {
    const link = view.root.querySelector(".citelab-answer a[data-ref-index][href]");
    if (!hover || !link) return { highlighted: 0 };
    view.hoverCard.show(link);
    return { highlighted: view.root.querySelectorAll("mark.citelab-cited-active").length };
  };
  return update;
}

const RENDERERS = {
  naive() {
    const root = fresh();
    return (text) => {
      root.innerHTML = markdownToHtml(text);
    };
  },
  seed() {
    const root = fresh();
    let shown = [];
    return (text) => {
      const blocks = renderBlocks(text).map(sanitizeToString);
      blocks.forEach((html, i) => {
        if (shown[i] === html) return;
        let element = root.children[i];
        if (!element) {
          element = document.createElement("div");
          root.append(element);
        }
        element.innerHTML = html;
      });
      while (root.children.length > blocks.length) root.lastElementChild.remove();
      shown = blocks;
    };
  },
  replace() {
    const view = new ReplacingBlockView(fresh());
    const stream = new BlockStream({ turn: "t1" });
    return (text) => view.update(stream.update(text));
  },
  morphOnly() {
    const view = new BlockView(fresh());
    const stream = new BlockStream({ turn: "t1" });
    return (text) => view.update(stream.update(text));
  },
  incremental() {
    const view = new BlockView(fresh());
    const stream = new BlockStream({ turn: "t1" });
    return (_text, piece) => view.update(stream.extend(piece));
  },
  // Every feature of the chat on (issue #13): the controls, copy, Read buttons, badges,
  // passages, a hover card held open on the first marker while the answer streams, and at
  // `done` the cited spans marked (an anchor per sentence) with the card's span highlighted.
  chat() {
    return chatRenderer({ hover: true, anchors: true });
  },
  // The same chat view with no hover card and no anchors (nothing to highlight): the side
  // by side column that shows what those two cost.
  chatPlain() {
    return chatRenderer({ hover: false, anchors: false });
  },
  parseOnly() {
    fresh();
    const stream = new BlockStream({ turn: "t1" });
    return (_text, piece) => stream.extend(piece);
  },
};

// A task boundary: each token is its own task, as each comm message or SSE chunk is, so the
// browser's garbage collector can work between updates instead of inside one long task.
const channel = new MessageChannel();
function nextTask() {
  return new Promise((resolve) => {
    channel.port1.onmessage = resolve;
    channel.port2.postMessage(null);
  });
}

// The end of a frame's rendering: a task queued during the frame runs after it. One channel
// for the whole run: a new MessageChannel per frame (as this harness first did) is a message
// pipe made and torn down 60 times a second, work the measured page would not do.
const frameEnds = new MessageChannel();
const afterFrameQueue = [];
frameEnds.port1.onmessage = () => afterFrameQueue.shift()();
function afterFrame(callback) {
  afterFrameQueue.push(callback);
  frameEnds.port2.postMessage(null);
}

/**
 * One update per token, each in its own task; `layout` forces the layout of each update
 * inside its measurement (nothing else would lay it out: no frame runs between updates).
 * `split` also times the parse, DOM and layout parts separately. Returns times in ms.
 * `limitMs` stops a slow renderer early (its totals are then over the tokens it did).
 */
export async function perToken(
  renderer,
  tokens,
  { layout = true, split = false, limitMs = Infinity } = {},
) {
  const update = RENDERERS[renderer]();
  const root = document.body.firstElementChild;
  const times = [];
  const starts = []; // ms after the run's performance mark (which Chrome's trace records)
  const parts = { parse: [], dom: [], layout: [] };
  const stream = split ? new BlockStream({ turn: "t1" }) : null;
  const view = split ? new BlockView(root) : null;
  const mark = performance.mark(`citelab-run-${renderer}`);
  let text = "";
  let spent = 0;
  for (const token of tokens) {
    text += token;
    await nextTask();
    const start = performance.now();
    if (split) {
      const blocks = stream.extend(token);
      const parsed = performance.now();
      view.update(blocks);
      const drawn = performance.now();
      void root.offsetHeight;
      const laid = performance.now();
      parts.parse.push(parsed - start);
      parts.dom.push(drawn - parsed);
      parts.layout.push(laid - drawn);
    } else {
      update(text, token);
      if (layout) void root.offsetHeight;
    }
    const took = performance.now() - start;
    times.push(took);
    starts.push(start - mark.startTime);
    spent += took;
    if (spent > limitMs) break;
  }
  let done = null;
  if (update.finish && times.length === tokens.length) {
    if (update.slicing) update.slicing.layout = layout;
    const ending = update.ending(text);
    await nextTask();
    const start = performance.now();
    const marked = { ...update.finish(ending) };
    if (layout) void root.offsetHeight;
    const took = performance.now() - start;
    Object.assign(marked, await update.settled());
    await nextTask();
    const begin = performance.now();
    const pointed = update.point();
    if (layout) void root.offsetHeight;
    done = { ms: took, pointMs: performance.now() - begin, ...marked, ...pointed };
  }
  return { times, starts, parts, mark: mark.name, done };
}

/**
 * Tokens arrive at `rate` per second (small bursts on timer tasks, as comm messages come);
 * the view renders once per animation frame, and nothing forces a layout: the browser lays
 * out and paints as it does for a person. Per frame it returns the update's script time
 * (`script`) and the frame's main-thread time from the update to the end of the frame's
 * rendering (`frame`: update + style + layout + paint, measured by a task queued in the
 * frame that runs after it); per token the display latency (arrival → that frame's end). A
 * renderer that falls behind shows latencies that keep growing.
 */
export function coalesced(tokens, rate, renderer = "incremental") {
  const update = RENDERERS[renderer]();
  const mark = performance.mark(`citelab-frames-${renderer}-${rate}`);
  return new Promise((resolve) => {
    const start = performance.now();
    const arrivals = new Float64Array(tokens.length);
    const latencies = [];
    const script = [];
    const starts = []; // ms after the run's performance mark, as in perToken
    const frame = [];
    let delivered = 0;
    let rendered = 0;
    let text = "";
    let piece = ""; // delivered since the last draw
    let queued = false;
    let busy = 0;
    const finish = () => {
      latencies.sort((a, b) => a - b);
      resolve({
        busy,
        duration: arrivals[tokens.length - 1] - start,
        frames: frame.length,
        script,
        times: script,
        starts,
        mark: mark.name,
        frame,
        done,
        latency: {
          p50: latencies[Math.floor(latencies.length * 0.5)],
          p95: latencies[Math.floor(latencies.length * 0.95)],
          max: latencies.at(-1),
        },
      });
    };
    // The turn's end, in a frame of its own (after the last token's).
    let done = null;
    const end_ = () => {
      if (!update.finish) {
        finish();
        return;
      }
      const ending = update.ending(text);
      const begin = performance.now();
      const marked = update.finish(ending);
      const took = performance.now() - begin;
      afterFrame(async () => {
        done = { ms: took, frameMs: performance.now() - begin, ...marked };
        Object.assign(done, await update.settled());
        requestAnimationFrame(() => {
          const start = performance.now();
          const pointed = update.point();
          const pointMs = performance.now() - start;
          afterFrame(() => {
            Object.assign(done, { pointMs, pointFrameMs: performance.now() - start, ...pointed });
            finish();
          });
        });
      });
    };
    const draw = () => {
      queued = false;
      const begin = performance.now();
      update(text, piece);
      piece = "";
      script.push(performance.now() - begin);
      starts.push(begin - mark.startTime);
      const shown = delivered;
      afterFrame(() => {
        const end = performance.now();
        frame.push(end - begin);
        busy += end - begin;
        for (; rendered < shown; rendered++) latencies.push(end - arrivals[rendered]);
        if (rendered === tokens.length) requestAnimationFrame(end_);
      });
    };
    const produce = () => {
      const now = performance.now();
      const due = Math.min(tokens.length, Math.floor(((now - start) / 1000) * rate));
      while (delivered < due) {
        arrivals[delivered] = now;
        piece += tokens[delivered];
        text += tokens[delivered++];
      }
      if (!queued && rendered < delivered) {
        queued = true;
        requestAnimationFrame(draw);
      }
      // A timer, not a busy loop: tokens come in small bursts, as comm messages do.
      if (delivered < tokens.length) setTimeout(produce, 2);
    };
    produce();
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

window.citelabBench = { makeAnswer, tokenize, anchorsOf, fullRender, perToken, coalesced };
