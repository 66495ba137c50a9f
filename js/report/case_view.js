// One case opened in the browser: the question, the answer rendered by the message view,
// the sources the turn held and which were cited, the gold, every scorer's verdict with its
// reasons, and the rounds. Every value is untrusted and set as text (the answer goes through
// the message view's Markdown + DOMPurify path).
import { element } from "../dom/nodes.js";
import { renderMessage } from "../views/message_view.js";
import { clip, swatch } from "./parts.js";

/** @typedef {import("./data.js").ReportData} ReportData */
/** @typedef {import("./data.js").CaseEntry} CaseEntry */

/** Everything about one scored turn, as a list of DOM parts. */
export class CaseView {
  /**
   * @param {Document} doc
   * @param {ReportData} data
   * @param {CaseEntry} entry
   */
  constructor(doc, data, entry) {
    this.doc = doc;
    this.data = data;
    this.entry = entry;
  }

  /** @returns {HTMLElement[]} */
  parts() {
    const doc = this.doc;
    const entry = this.entry;
    const variant = this.data.variants[entry.v] ?? { name: "?" };
    const title = element(doc, "h3", "citelab-case-title");
    title.append(
      swatch(doc, variant.color),
      `${variant.name} · ${entry.m} · ${entry.d}/${entry.c} · turn ${Number(entry.t) + 1}`,
    );
    /** @type {HTMLElement[]} */
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

  /** @param {string} text */
  heading(text) {
    return element(this.doc, "h4", "citelab-case-heading", text);
  }

  /** @param {number} index */
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
    /** @type {Map<number, number>} */
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
        why.append(reasonLine(doc, reason, this.data.texts, metric.higher !== false));
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
    /** @type {import("./data.js").Round[]} */
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
// The mark says whether the unit is good for the metric: a hit counts toward the value, so
// where lower is better (dangling markers, leaks) a hit is the bad case. A unit the scorer
// could not judge (no passage to read) is "–", neither.
/**
 * @param {Document} doc
 * @param {import("./data.js").Reason} reason
 * @param {string[]} texts
 * @param {boolean} higher  is a higher value of the metric better
 */
function reasonLine(doc, reason, texts, higher) {
  const judged = reason.judgeable !== false;
  const good = higher ? Boolean(reason.hit) : !reason.hit;
  const mark = !judged ? "– not judgeable:" : good ? "✔" : "✘";
  const line = element(doc, "div", !judged ? "citelab-na" : good ? "citelab-hit" : "citelab-miss");
  /** @param {unknown} value */
  const text = (value) => {
    if (Array.isArray(value) && value.length === 1 && Number.isInteger(value[0]))
      return String(texts[value[0]] ?? "");
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  };
  /** @param {[string, unknown]} entry */
  const shown = ([key, value]) =>
    key !== "hit" && key !== "judgeable" && value !== null && value !== "";
  const fields = Object.entries(reason)
    .filter(shown)
    .map(([key, value]) => `${key}: ${text(value)}`);
  line.textContent = `${mark} ${fields.join("; ")}`;
  return line;
}

/**
 * @param {Document} doc
 * @param {string[]} labels
 */
function headRow(doc, labels) {
  const row = element(doc, "tr");
  for (const label of labels) row.append(element(doc, "th", "", label));
  return row;
}

/**
 * @param {Document} doc
 * @param {string} text
 */
function details(doc, text) {
  const cell = element(doc, "td");
  if (!text) return cell;
  const box = element(doc, "details");
  box.append(element(doc, "summary", "", clip(text, 60)), element(doc, "p", "", text));
  cell.append(box);
  return cell;
}

/**
 * @param {unknown} value
 */
function fmt(value) {
  const number = Number(value);
  return Number.isInteger(number) ? String(number) : number.toFixed(2);
}
