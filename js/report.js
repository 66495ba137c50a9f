// The case browser of an evaluation report (report.html and `EvalResult.show()`): a list of
// every scored turn, filterable by variant, model, dataset, a metric it failed and "differs
// from the baseline", and one case opened at a time: the question, the answer rendered by
// the message view (cited spans highlighted, the final sources), the sources the turn held
// and which of them were cited, the gold, every scorer's verdict with its reasons, and the
// rounds (what the model was shown, what it searched, what it wrote).
//
// The data is a JSON document in the page (`<script type="application/json">`, written by
// citelab.evals._case_browser) holding what the list needs; the rest of each turn is one
// JSON line, and the lines are stored gzip-compressed in blocks (base64, one block a line),
// decompressed with the browser's own DecompressionStream when a turn of the block is first
// opened: a 10,000-turn page is about 8× smaller to parse, and nothing is read before it is
// needed. Every string in the data is untrusted (model output, source titles, URIs) and
// reaches the page as text, except the answer, which goes through the message view's
// Markdown + DOMPurify path. The page makes no request.
import { element } from "./dom.js";
import { renderMessage } from "./message_view.js";

// Rows drawn at once: a few screens of the list. The next ones are drawn when the list is
// scrolled to its end (or "Show more" is pressed): a long list costs no layout up front.
const PAGE = 50;

/**
 * Mount a case browser on `root` from the report data `data` (see the module comment).
 * `details`, when given, holds the rest of each entry (answer, sources, gold, scores,
 * reasons, rounds), one JSON line per entry: its text, or a function that reads it (read
 * only when a turn is first opened). With `packing` `{ encoding: "gzip+base64", block: n }`
 * the text is blocks of `n` lines, each gzip-compressed and base64-encoded, one a line.
 * Only an opened entry's line is parsed (and only its block decompressed).
 */
export function mountCaseBrowser(root, data, details = null, packing = null) {
  const browser = new CaseBrowser(root, normalize(data), new Details(details, packing));
  browser.draw();
  return browser;
}

const UNREADABLE = "the details of this turn could not be read";

class Details {
  // `source`: the text, or a function giving it (or the promise of it); `packing`: the
  // packing, or a function giving it (both are read when a turn is first opened).
  constructor(source, packing) {
    this.source = source;
    this.packing = packing;
    this.lines = null; // the plain lines, or the packed blocks
    this.blocks = new Map(); // block number → its lines, or the promise of them
  }

  /** The entry at `index` with its details: now when they are at hand (or there are none),
   * else a promise of it (the page is still being read, or its block decompressed). */
  of(entry, index) {
    if (this.lines === null) {
      let text;
      try {
        text = typeof this.source === "function" ? this.source() : this.source;
      } catch (error) {
        return failed(entry, error.message);
      }
      if (typeof text?.then === "function") {
        // Still on its way (the page is being parsed): read it once it is there.
        this.waiting ??= text.then((arrived) => {
          this.source = arrived;
        });
        return this.waiting.then(
          () => this.of(entry, index),
          (error) => failed(entry, error.message),
        );
      }
      if (typeof text !== "string") return entry;
      this.read(text);
    }
    if (this.unknown) return failed(entry, `unknown encoding ${this.unknown}`);
    if (!this.packed) return merged(entry, this.lines[index]);
    const number = Math.floor(index / this.block);
    const offset = index - number * this.block;
    const known = this.blocks.get(number);
    if (Array.isArray(known)) return merged(entry, known[offset]);
    let pending = known;
    if (pending === undefined) {
      pending = gunzip(this.lines[number] ?? "").then((text) => {
        const lines = text.split("\n");
        this.blocks.set(number, lines);
        return lines;
      });
      this.blocks.set(number, pending);
    }
    return pending.then(
      (lines) => merged(entry, lines[offset]),
      (error) => failed(entry, error.message),
    );
  }

  read(text) {
    const packing = typeof this.packing === "function" ? this.packing() : this.packing;
    const encoding = packing?.encoding ?? "";
    this.packed = encoding === "gzip+base64";
    this.unknown = encoding && !this.packed ? String(encoding) : "";
    this.block = Math.max(1, Math.trunc(Number(packing?.block)) || 1);
    this.lines = text.split("\n");
  }
}

function failed(entry, why) {
  return { ...entry, e: entry.e ?? `${UNREADABLE} (${why})` };
}

function merged(entry, line) {
  try {
    return { ...JSON.parse(line ?? "{}"), ...entry };
  } catch {
    return { ...entry, e: entry.e ?? UNREADABLE };
  }
}

/** The text of base64 `encoded` gzip data, decompressed by the browser's own stream. */
async function gunzip(encoded) {
  if (typeof DecompressionStream !== "function")
    throw new Error("this browser has no DecompressionStream to unpack them");
  let binary;
  try {
    binary = atob(encoded);
  } catch {
    throw new Error("their block is not base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  }).pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch {
    throw new Error("their block is not valid gzip-compressed UTF-8");
  }
}

function normalize(data) {
  const safe = data && typeof data === "object" ? data : {};
  return {
    variants: Array.isArray(safe.variants) ? safe.variants : [],
    baseline: typeof safe.baseline === "string" ? safe.baseline : null,
    metrics: Array.isArray(safe.metrics) ? safe.metrics : [],
    sources: Array.isArray(safe.sources) ? safe.sources : [],
    texts: Array.isArray(safe.texts) ? safe.texts : [],
    cases: Array.isArray(safe.cases) ? safe.cases : [],
  };
}

class CaseBrowser {
  constructor(root, data, details) {
    this.root = root;
    this.doc = root.ownerDocument;
    this.data = data;
    this.details = details;
    this.filters = { variant: "", model: "", dataset: "", metric: "", differs: false, text: "" };
    this.matching = [];
    this.drawn = 0;
    this.selected = -1;
    this.build();
  }

  build() {
    const doc = this.doc;
    this.root.classList.add("citelab", "citelab-cases");
    const bar = element(doc, "form", "citelab-case-filters");
    bar.setAttribute("role", "search");
    bar.addEventListener("submit", (event) => event.preventDefault());
    const variants = this.data.variants.map((v, index) => [String(index), String(v.name)]);
    const models = unique(this.data.cases.map((c) => String(c.m)));
    const datasets = unique(this.data.cases.map((c) => String(c.d)));
    const metrics = this.data.metrics.map((m) => [String(m.name), String(m.name)]);
    bar.append(
      this.select("variant", "Variant", variants),
      this.select(
        "model",
        "Model",
        models.map((m) => [m, m]),
      ),
      this.select(
        "dataset",
        "Dataset",
        datasets.map((d) => [d, d]),
      ),
      this.select("metric", "Failed metric", [["*", "any metric"], ...metrics]),
      this.checkbox("differs", "Differs from baseline"),
      this.search(),
    );
    this.count = element(doc, "p", "citelab-case-count");
    this.count.setAttribute("aria-live", "polite");
    this.table = element(doc, "table", "citelab-case-list");
    const head = element(doc, "tr");
    for (const label of ["variant", "model", "dataset", "case", "turn", "question", "failed"])
      head.append(element(doc, "th", "", label));
    this.body = element(doc, "tbody");
    this.table.append(element(doc, "thead"), this.body);
    this.table.tHead.append(head);
    this.table.addEventListener("click", (event) => this.clicked(event));
    this.table.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") this.clicked(event);
    });
    this.more = element(doc, "button", "citelab-case-more", "Show more");
    this.more.type = "button";
    this.more.addEventListener("click", () => this.drawMore());
    this.detail = element(doc, "section", "citelab-case-detail");
    this.detail.setAttribute("aria-label", "Case");
    this.detail.tabIndex = -1;
    // The list scrolls on its own, so the opened case shows below it.
    const scroll = element(doc, "div", "citelab-case-scroll");
    scroll.append(this.table, this.more);
    this.root.replaceChildren(bar, this.count, scroll, this.detail);
    const View = doc.defaultView?.IntersectionObserver;
    if (typeof View === "function") {
      const seen = new View(
        (changes) => {
          if (changes.some((change) => change.isIntersecting) && !this.more.hidden)
            this.drawMore();
        },
        { root: scroll, rootMargin: "200px" },
      );
      seen.observe(this.more);
    }
  }

  select(name, label, options) {
    const doc = this.doc;
    const wrap = element(doc, "label", "citelab-case-filter");
    wrap.append(element(doc, "span", "", `${label} `));
    const select = element(doc, "select");
    select.name = name;
    select.append(new Option("all", ""));
    for (const [value, text] of options) select.append(new Option(text, value));
    select.addEventListener("change", () => this.filter(name, select.value));
    wrap.append(select);
    return wrap;
  }

  checkbox(name, label) {
    const wrap = element(this.doc, "label", "citelab-case-filter");
    const box = element(this.doc, "input");
    box.type = "checkbox";
    box.name = name;
    box.disabled = this.data.baseline === null;
    box.addEventListener("change", () => this.filter(name, box.checked));
    wrap.append(box, ` ${label}`);
    return wrap;
  }

  search() {
    const wrap = element(this.doc, "label", "citelab-case-filter");
    const input = element(this.doc, "input");
    input.type = "search";
    input.name = "text";
    input.placeholder = "case id or question";
    input.addEventListener("input", () => this.filter("text", input.value.trim().toLowerCase()));
    wrap.append(element(this.doc, "span", "", "Find "), input);
    return wrap;
  }

  filter(name, value) {
    this.filters[name] = value;
    this.drawList();
  }

  matches(entry) {
    const f = this.filters;
    if (f.variant !== "" && String(entry.v) !== f.variant) return false;
    if (f.model && String(entry.m) !== f.model) return false;
    if (f.dataset && String(entry.d) !== f.dataset) return false;
    const failed = Array.isArray(entry.fail) ? entry.fail : [];
    if (f.metric === "*" && failed.length === 0 && !entry.e) return false;
    if (f.metric && f.metric !== "*" && !failed.includes(f.metric)) return false;
    if (f.differs && !entry.diff) return false;
    if (f.text) {
      const hay = `${entry.c} ${entry.q}`.toLowerCase();
      if (!hay.includes(f.text)) return false;
    }
    return true;
  }

  draw() {
    this.drawList();
    this.drawDetail();
  }

  drawList() {
    this.matching = [];
    this.data.cases.forEach((entry, index) => {
      if (this.matches(entry)) this.matching.push(index);
    });
    this.drawn = 0;
    this.body.replaceChildren();
    this.drawMore();
  }

  /** Append the next rows of the matching turns. */
  drawMore() {
    const next = this.matching.slice(this.drawn, this.drawn + PAGE);
    this.body.append(...next.map((index) => this.row(index)));
    this.drawn += next.length;
    const matching = this.matching.length;
    this.count.textContent =
      `${matching} of ${this.data.cases.length} turns match` +
      (this.drawn < matching ? ` (showing the first ${this.drawn})` : "");
    this.more.hidden = this.drawn >= matching;
  }

  row(index) {
    const doc = this.doc;
    const entry = this.data.cases[index];
    const row = element(doc, "tr", "citelab-case-row");
    row.dataset.index = String(index);
    row.tabIndex = 0;
    if (index === this.selected) row.setAttribute("aria-selected", "true");
    const variant = this.data.variants[entry.v] ?? { name: "?" };
    const name = element(doc, "td", "citelab-case-variant");
    name.append(swatch(doc, variant.color), String(variant.name));
    const failed = Array.isArray(entry.fail) ? entry.fail : [];
    const verdict = entry.e ? "error" : failed.length ? failed.join(", ") : "—";
    row.append(
      name,
      element(doc, "td", "", String(entry.m)),
      element(doc, "td", "", String(entry.d)),
      element(doc, "td", "", String(entry.c)),
      element(doc, "td", "num", String(Number(entry.t) + 1)),
      element(doc, "td", "citelab-case-question", clip(String(entry.q ?? ""), 90)),
      element(doc, "td", entry.e || failed.length ? "fails" : "", verdict),
    );
    return row;
  }

  clicked(event) {
    const row = event.target.closest?.("tr.citelab-case-row");
    if (!row || !this.body.contains(row)) return;
    event.preventDefault?.();
    this.open(Number(row.dataset.index));
  }

  /** Open the case at `index` of the data's cases; the promise settles once it is shown. */
  open(index) {
    this.selected = index;
    for (const row of this.body.querySelectorAll("tr[aria-selected]"))
      row.removeAttribute("aria-selected");
    this.body.querySelector(`tr[data-index="${index}"]`)?.setAttribute("aria-selected", "true");
    const shown = this.drawDetail();
    this.detail.focus({ preventScroll: true });
    return shown;
  }

  /** Draw the selected case: at once when its details are at hand, else once its block is
   * decompressed (unless another case was chosen meanwhile). */
  drawDetail() {
    const index = this.selected;
    const listed = this.data.cases[index];
    if (!listed) {
      this.detail.replaceChildren(
        element(this.doc, "p", "citelab-muted", "Choose a turn in the list to see it whole."),
      );
      return Promise.resolve();
    }
    const entry = this.details.of(listed, index);
    if (typeof entry?.then !== "function") {
      this.show(entry);
      return Promise.resolve();
    }
    this.detail.setAttribute("aria-busy", "true");
    this.detail.replaceChildren(element(this.doc, "p", "citelab-muted", "Opening the turn…"));
    return entry.then((full) => {
      if (this.selected === index) this.show(full);
    });
  }

  show(entry) {
    this.detail.removeAttribute("aria-busy");
    this.detail.replaceChildren(...new CaseView(this.doc, this.data, entry).parts());
  }
}

/** Everything about one scored turn, as a list of DOM parts. */
class CaseView {
  constructor(doc, data, entry) {
    this.doc = doc;
    this.data = data;
    this.entry = entry;
  }

  parts() {
    const doc = this.doc;
    const entry = this.entry;
    const variant = this.data.variants[entry.v] ?? { name: "?" };
    const title = element(doc, "h3", "citelab-case-title");
    title.append(
      swatch(doc, variant.color),
      `${variant.name} · ${entry.m} · ${entry.d}/${entry.c} · turn ${Number(entry.t) + 1}`,
    );
    const parts = [title];
    if (variant.description) parts.push(element(doc, "p", "citelab-muted", variant.description));
    parts.push(this.heading("Question"), element(doc, "p", "citelab-case-q", String(entry.q)));
    if (entry.e) parts.push(element(doc, "p", "citelab-case-error", `Failed: ${entry.e}`));
    parts.push(this.heading("Answer"), this.answer());
    parts.push(this.heading("Sources held and cited"), this.sources());
    parts.push(this.heading("Gold"), this.gold());
    parts.push(this.heading("Verdicts"), this.verdicts());
    parts.push(this.heading("Rounds"), this.rounds());
    return parts;
  }

  heading(text) {
    return element(this.doc, "h4", "citelab-case-heading", text);
  }

  source(index) {
    const raw = this.data.sources[index];
    return Array.isArray(raw)
      ? { uri: String(raw[0] ?? ""), title: String(raw[1] ?? ""), content: String(raw[2] ?? "") }
      : { uri: "", title: "", content: "" };
  }

  answer() {
    const box = element(this.doc, "div", "citelab-case-answer");
    const message = this.entry.msg;
    if (message && typeof message === "object" && Array.isArray(message.content)) {
      renderMessage(box, message);
    } else {
      box.append(element(this.doc, "p", "citelab-muted", "No answer was recorded."));
    }
    if (this.entry.na) box.prepend(element(this.doc, "p", "citelab-muted", "(no-answer message)"));
    return box;
  }

  sources() {
    const doc = this.doc;
    const held = Array.isArray(this.entry.held) ? this.entry.held : [];
    if (!held.length) return element(doc, "p", "citelab-muted", "The turn held no sources.");
    const cited = new Map((this.entry.cited ?? []).map(([number, index]) => [index, number]));
    const table = element(doc, "table", "citelab-case-sources");
    table.append(headRow(doc, ["held as", "final", "title", "uri", "text the model was given"]));
    for (const [number, index] of held) {
      const source = this.source(index);
      const final = cited.get(index);
      const row = element(doc, "tr", final === undefined ? "citelab-uncited" : "citelab-cited");
      row.append(
        element(doc, "td", "num", `[${number}]`),
        element(doc, "td", "num", final === undefined ? "dropped" : `[${final}]`),
        element(doc, "td", "", source.title),
        element(doc, "td", "", source.uri),
        details(doc, source.content),
      );
      table.append(row);
    }
    return table;
  }

  gold() {
    const doc = this.doc;
    const gold = this.entry.g ?? {};
    const list = element(doc, "ul", "citelab-case-gold");
    list.append(
      element(
        doc,
        "li",
        "",
        gold.expect === false ? "Expected: the no-answer message." : "Expected: an answer.",
      ),
    );
    for (const [text, uris] of gold.claims ?? []) {
      const item = element(doc, "li", "", `Claim: ${text}`);
      item.append(element(doc, "span", "citelab-muted", ` — supported by ${uris.join(", ")}`));
      list.append(item);
    }
    if (gold.must_cite?.length)
      list.append(element(doc, "li", "", `Must cite: ${gold.must_cite.join(", ")}`));
    if (gold.must_not_cite?.length)
      list.append(element(doc, "li", "", `Must not cite: ${gold.must_not_cite.join(", ")}`));
    if (gold.min_searches)
      list.append(element(doc, "li", "", `At least ${gold.min_searches} search(es).`));
    return list;
  }

  verdicts() {
    const doc = this.doc;
    const scores = this.entry.s ?? {};
    const reasons = this.entry.r ?? {};
    const failed = new Set(this.entry.fail ?? []);
    const table = element(doc, "table", "citelab-case-verdicts");
    table.append(headRow(doc, ["metric", "value", "units", "verdict", "reasons"]));
    for (const metric of this.data.metrics) {
      const name = String(metric.name);
      const [value, numerator, denominator] = scores[name] ?? [null, 0, 0];
      const applicable = value !== null && value !== undefined;
      const verdict = !applicable ? "n/a" : failed.has(name) ? "✘ missed" : "✔";
      const row = element(doc, "tr", !applicable ? "citelab-na" : failed.has(name) ? "fails" : "");
      row.dataset.metric = name;
      const why = element(doc, "td", "citelab-case-reasons");
      for (const reason of reasons[name] ?? [])
        why.append(reasonLine(doc, reason, this.data.texts));
      row.append(
        element(doc, "td", "", `${name} ${metric.higher ? "↑" : "↓"}`),
        element(doc, "td", "num", applicable ? Number(value).toFixed(3) : "—"),
        element(doc, "td", "num", applicable ? `${fmt(numerator)}/${fmt(denominator)}` : ""),
        element(doc, "td", "", verdict),
        why,
      );
      table.append(row);
    }
    return table;
  }

  rounds() {
    const doc = this.doc;
    const rounds = Array.isArray(this.entry.rounds) ? this.entry.rounds : [];
    const list = element(doc, "ol", "citelab-case-rounds");
    if (this.entry.fs) {
      list.append(
        element(doc, "li", "citelab-muted", `The service searched first (${this.entry.fs}×).`),
      );
    }
    for (const round of rounds) {
      const item = element(doc, "li", "citelab-case-round");
      const shown = (round.visible ?? []).map(([n, i]) => `[${n}] ${this.source(i).title}`);
      const added = (round.added ?? []).map(([n, i]) => `[${n}] ${this.source(i).title}`);
      item.append(
        element(doc, "p", "", `Shown: ${shown.length ? shown.join(" · ") : "no numbered sources"}`),
      );
      if (round.searches)
        item.append(
          element(
            doc,
            "p",
            "",
            `Searched ${round.searches}× — added ${added.join(" · ") || "nothing new"}`,
          ),
        );
      const wrote = element(doc, "pre", "citelab-case-wrote", String(round.text ?? ""));
      item.append(element(doc, "p", "", "Wrote:"), wrote);
      list.append(item);
    }
    if (!rounds.length && !this.entry.fs)
      list.append(element(doc, "li", "citelab-muted", "No model round was recorded."));
    return list;
  }
}

// One detail row of a scorer: "✔/✘ key: value; …" (a value `[i]` is the i-th long text).
function reasonLine(doc, reason, texts) {
  const line = element(doc, "div", reason.hit ? "citelab-hit" : "citelab-miss");
  const text = (value) => {
    if (Array.isArray(value) && value.length === 1 && Number.isInteger(value[0]))
      return String(texts[value[0]] ?? "");
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  };
  const fields = Object.entries(reason)
    .filter(([key, value]) => key !== "hit" && value !== null && value !== "")
    .map(([key, value]) => `${key}: ${text(value)}`);
  line.textContent = `${reason.hit ? "✔" : "✘"} ${fields.join("; ")}`;
  return line;
}

function headRow(doc, labels) {
  const row = element(doc, "tr");
  for (const label of labels) row.append(element(doc, "th", "", label));
  return row;
}

function details(doc, text) {
  const cell = element(doc, "td");
  if (!text) return cell;
  const box = element(doc, "details");
  box.append(element(doc, "summary", "", clip(text, 60)), element(doc, "p", "", text));
  cell.append(box);
  return cell;
}

function swatch(doc, color) {
  const dot = element(doc, "span", "citelab-swatch");
  // Only a #rrggbb colour reaches the style (the data is untrusted).
  if (typeof color === "string" && /^#[0-9a-fA-F]{6}$/.test(color)) dot.style.background = color;
  dot.setAttribute("aria-hidden", "true");
  return dot;
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function fmt(value) {
  const number = Number(value);
  return Number.isInteger(number) ? String(number) : number.toFixed(2);
}

function unique(values) {
  return [...new Set(values)].sort();
}

/** The details script of a page, which may not be parsed yet when the list is drawn. */
class Later {
  constructor(doc, id) {
    this.doc = doc;
    this.id = id;
  }

  /** The script's text, or the promise of it while the page is still being parsed. */
  text() {
    const script = this.doc.getElementById(this.id);
    if (script) return script.textContent;
    if (this.doc.readyState !== "loading")
      throw new Error(`the page has no element #${this.id} holding them`);
    return new Promise((resolve, reject) => {
      this.doc.addEventListener(
        "DOMContentLoaded",
        () => {
          try {
            resolve(this.text());
          } catch (error) {
            reject(error);
          }
        },
        { once: true },
      );
    });
  }

  packing() {
    const script = this.doc.getElementById(this.id);
    return script?.dataset.encoding
      ? { encoding: script.dataset.encoding, block: script.dataset.block }
      : null;
  }
}

/** Mount every `[data-citelab-cases]` element from the JSON script its value names. */
export function mountAll(doc = globalThis.document) {
  const browsers = [];
  for (const root of doc.querySelectorAll("[data-citelab-cases]")) {
    const source = doc.getElementById(root.dataset.citelabCases);
    let data = {};
    try {
      data = JSON.parse(source?.textContent ?? "{}");
    } catch (error) {
      root.textContent = `The case data could not be read: ${error.message}`;
      continue;
    }
    const id = root.dataset.citelabCaseDetails;
    if (!id) {
      browsers.push(mountCaseBrowser(root, data));
      continue;
    }
    // The details come last in the page: the list is drawn before the parser reaches them.
    const details = new Later(doc, id);
    browsers.push(
      mountCaseBrowser(root, data, () => details.text(), () => details.packing()),
    );
  }
  return browsers;
}

if (typeof document !== "undefined") mountAll(document);
