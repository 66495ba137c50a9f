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
import { listOf } from "../contract/model.js";
import { element, isHtml } from "../dom/nodes.js";
import { CaseView } from "./case_view.js";
import { Details } from "./details.js";
import { clip, swatch } from "./parts.js";

/** @typedef {import("./data.js").ReportData} ReportData */
/** @typedef {import("./data.js").CaseEntry} CaseEntry */
/** @typedef {import("./details.js").Source} DetailsSource */
/** @typedef {import("./details.js").Packing} Packing */

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
 * @param {HTMLElement} root
 * @param {unknown} data  ReportData, as the page holds it
 * @param {DetailsSource} [details]
 * @param {Packing|(() => Packing)|null} [packing]
 */
export function mountCaseBrowser(root, data, details = null, packing = null) {
  const browser = new CaseBrowser(root, normalize(data), new Details(details, packing));
  browser.draw();
  return browser;
}

/**
 * @param {unknown} data
 * @returns {ReportData}
 */
function normalize(data) {
  const safe = /** @type {Partial<Record<keyof ReportData, unknown>>} */ (
    data && typeof data === "object" ? data : {}
  );
  return {
    variants: listOf(safe.variants),
    baseline: typeof safe.baseline === "string" ? safe.baseline : null,
    metrics: listOf(safe.metrics),
    sources: listOf(safe.sources),
    texts: listOf(safe.texts),
    cases: listOf(safe.cases),
  };
}

class CaseBrowser {
  // Set by build():
  /** @type {HTMLParagraphElement} */ count;
  /** @type {HTMLTableElement} */ table;
  /** @type {HTMLTableSectionElement} */ body;
  /** @type {HTMLButtonElement} */ more;
  /** @type {HTMLElement} */ detail;

  /**
   * @param {HTMLElement} root
   * @param {ReportData} data
   * @param {Details} details
   */
  constructor(root, data, details) {
    this.root = root;
    this.doc = root.ownerDocument;
    this.data = data;
    this.details = details;
    this.filters = { variant: "", model: "", dataset: "", metric: "", differs: false, text: "" };
    /** @type {number[]} */
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
    this.table.tHead?.append(head);
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
        (/** @type {IntersectionObserverEntry[]} */ changes) => {
          if (changes.some((change) => change.isIntersecting) && !this.more.hidden)
            this.drawMore();
        },
        { root: scroll, rootMargin: "200px" },
      );
      seen.observe(this.more);
    }
  }

  /**
   * @param {"variant"|"model"|"dataset"|"metric"} name
   * @param {string} label
   * @param {string[][]} options  [value, text]
   */
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

  /**
   * @param {"differs"} name
   * @param {string} label
   */
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

  /**
   * @template {keyof CaseBrowser["filters"]} K
   * @param {K} name
   * @param {CaseBrowser["filters"][K]} value
   */
  filter(name, value) {
    this.filters[name] = value;
    this.drawList();
  }

  /** @param {CaseEntry} entry */
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
    /** @type {number[]} */
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

  /** @param {number} index */
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

  /** @param {Event} event */
  clicked(event) {
    const row = /** @type {HTMLElement|null|undefined} */ (
      /** @type {Element|null} */ (event.target)?.closest?.("tr.citelab-case-row")
    );
    if (!row || !this.body.contains(row)) return;
    event.preventDefault?.();
    this.open(Number(row.dataset.index));
  }

  /**
   * Open the case at `index` of the data's cases; the promise settles once it is shown.
   * @param {number} index
   */
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
   * decompressed (unless another case was chosen meanwhile).
   * @returns {Promise<void>} */
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
    if (!(entry instanceof Promise)) {
      this.show(entry);
      return Promise.resolve();
    }
    this.detail.setAttribute("aria-busy", "true");
    this.detail.replaceChildren(element(this.doc, "p", "citelab-muted", "Opening the turn…"));
    return entry.then((full) => {
      if (this.selected === index) this.show(full);
    });
  }

  /** @param {CaseEntry} entry */
  show(entry) {
    this.detail.removeAttribute("aria-busy");
    this.detail.replaceChildren(...new CaseView(this.doc, this.data, entry).parts());
  }
}

/**
 * @param {string[]} values
 * @returns {string[]}
 */
function unique(values) {
  return [...new Set(values)].sort();
}

/** The details script of a page, which may not be parsed yet when the list is drawn. */
export class Later {
  /**
   * @param {Document} doc
   * @param {string} id
   */
  constructor(doc, id) {
    this.doc = doc;
    this.id = id;
  }

  /**
   * The script's text, or the promise of it while the page is still being parsed.
   * @returns {string|null|Promise<string|null>}
   */
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

  /** @returns {Packing} */
  packing() {
    const script = this.doc.getElementById(this.id);
    return script?.dataset.encoding
      ? { encoding: script.dataset.encoding, block: script.dataset.block }
      : null;
  }
}

/** Mount every `[data-citelab-cases]` element from the JSON script its value names. */
export function mountAll(doc = globalThis.document) {
  /** @type {CaseBrowser[]} */
  const browsers = [];
  for (const root of doc.querySelectorAll("[data-citelab-cases]")) {
    if (!isHtml(root)) continue;
    const source = doc.getElementById(root.dataset.citelabCases ?? "");
    /** @type {unknown} */
    let data = {};
    try {
      data = JSON.parse(source?.textContent ?? "{}");
    } catch (error) {
      const message = /** @type {{message?: string}} */ (error).message;
      root.textContent = `The case data could not be read: ${message}`;
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
