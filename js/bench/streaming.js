// Streaming-render benchmark, run inside Chromium by benchmarks/bench_streaming.py. Three
// strategies side by side on the same answer and the same tokens:
//   naive        re-render everything per token (markdown-it + DOMPurify + innerHTML)
//   seed         re-parse everything per token, sanitize each block, replace changed blocks
//   incremental  ours: parse only the unsettled tail, replace only changed blocks
import { BlockView } from "../block_view.js";
import { markdownToHtml, renderBlocks } from "../markdown.js";
import { sanitizeToString } from "../sanitize.js";
import { BlockStream } from "../stream.js";

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

function timeIt(work) {
  const start = performance.now();
  work();
  return performance.now() - start;
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
    times.push(
      timeIt(() => {
        root.innerHTML = markdownToHtml(text);
        void root.offsetHeight;
      }),
    );
  }
  return median(times);
}

const STRATEGIES = {
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
  incremental() {
    const view = new BlockView(fresh());
    const stream = new BlockStream({ turn: "t1" });
    return (text) => view.update(stream.update(text));
  },
  // The parts of ours, for the breakdown: parsing the tail only (no DOM at all).
  parseOnly() {
    fresh();
    const stream = new BlockStream({ turn: "t1" });
    return (text) => stream.update(text);
  },
};

/** Update after every token; returns per-update times (ms), layout included. */
export function perToken(strategy, tokens, { limitMs = Infinity, layout = true } = {}) {
  const update = STRATEGIES[strategy]();
  const root = document.body.firstElementChild;
  const times = [];
  let text = "";
  let spent = 0;
  for (const token of tokens) {
    text += token;
    const took = timeIt(() => {
      update(text);
      if (layout) void root.offsetHeight;
    });
    times.push(took);
    spent += took;
    if (spent > limitMs) break;
  }
  return times;
}

/**
 * Tokens arrive at `rate` per second (small bursts on timer tasks, as comm messages come);
 * the view renders once per animation frame. Returns the main-thread time spent rendering,
 * the stream's duration, the longest frame's render, and each token's display latency
 * (arrival → end of the frame that showed it): a renderer that falls behind shows latencies
 * that keep growing.
 */
export function coalesced(tokens, rate) {
  const update = STRATEGIES.incremental();
  const root = document.body.firstElementChild;
  return new Promise((resolve) => {
    const start = performance.now();
    const arrivals = new Float64Array(tokens.length);
    const latencies = [];
    let delivered = 0;
    let rendered = 0;
    let text = "";
    let renderTime = 0;
    let longest = 0;
    let frames = 0;
    let queued = false;
    const frame = () => {
      queued = false;
      const took = timeIt(() => {
        update(text);
        void root.offsetHeight;
      });
      const shown = performance.now();
      for (; rendered < delivered; rendered++) latencies.push(shown - arrivals[rendered]);
      renderTime += took;
      longest = Math.max(longest, took);
      frames++;
      if (rendered === tokens.length) {
        latencies.sort((a, b) => a - b);
        resolve({
          renderTime,
          duration: arrivals[tokens.length - 1] - start,
          longest,
          frames,
          p50: latencies[Math.floor(latencies.length * 0.5)],
          p95: latencies[Math.floor(latencies.length * 0.95)],
          max: latencies.at(-1),
        });
      }
    };
    const produce = () => {
      const now = performance.now();
      const due = Math.min(tokens.length, Math.floor(((now - start) / 1000) * rate));
      while (delivered < due) {
        arrivals[delivered] = now;
        text += tokens[delivered++];
      }
      if (!queued && rendered < delivered) {
        queued = true;
        requestAnimationFrame(frame);
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

window.citelabBench = { makeAnswer, tokenize, fullRender, perToken, coalesced };
