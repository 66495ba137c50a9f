// The case browser's data, as citelab.evals.report._case_browser writes it. Its schema is the
// Python one, every key documented there (src/citelab/evals/report/_case_data.py); these
// typedefs mirror it under the same names, and tests/evals/report/test_case_data.py checks
// that each names the same keys. Keys are short where they repeat per turn. Every value is
// untrusted and read defensively.

/**
 * @typedef {object} ReportData
 * @property {Variant[]} variants
 * @property {string|null} baseline     the baseline variant's name
 * @property {Metric[]} metrics
 * @property {unknown[][]} sources      [uri, title, content] by index
 * @property {string[]} texts           long texts reasons refer to by index
 * @property {CaseEntry[]} cases
 */

/**
 * @typedef {object} Variant
 * @property {string} name
 * @property {string} [description]
 * @property {string} [color]
 */

/**
 * @typedef {object} Metric
 * @property {string} name
 * @property {boolean} [higher]         a higher value is better
 */

/** @typedef {[number, number]} NumberedSource  [the number shown, the source's index] */

/**
 * One scored turn: the list's keys, then (once opened) its details.
 * @typedef {object} CaseEntry
 * @property {number} v            variant index
 * @property {string} m            model
 * @property {string} d            dataset
 * @property {string} c            case id
 * @property {number} t            turn index
 * @property {string} q            question
 * @property {string|null} [e]     why the turn failed or could not be read
 * @property {string[]} [fail]     metrics it failed
 * @property {boolean} [diff]      differs from the baseline
 * @property {boolean} [na]        a no-answer message
 * @property {number} [fs]         searches the service forced first
 * @property {import("../contract/message.js").WireMessage|null} [msg]  the answer
 * @property {NumberedSource[]} [held]   the sources the turn held
 * @property {NumberedSource[]} [cited]  the final numbers of the cited ones
 * @property {Gold} [g]
 * @property {Record<string, [number|null, number, number]>} [s]  value, numerator, denominator
 * @property {Record<string, Reason[]>} [r]
 * @property {Round[]} [rounds]
 */

/**
 * @typedef {object} Gold
 * @property {boolean} [expect]
 * @property {[string, string[]][]} [claims]
 * @property {string[]} [must_cite]
 * @property {string[]} [must_not_cite]
 * @property {number} [min_searches]
 */

/**
 * @typedef {object} Round
 * @property {string} [text]
 * @property {NumberedSource[]} [visible]
 * @property {number} [searches]
 * @property {NumberedSource[]} [added]
 */

/**
 * A scorer's detail row: hit counts toward the value (good where higher is better, bad where
 * lower is); judgeable: false marks a unit left out (no passage to judge).
 * @typedef {{hit?: boolean, judgeable?: boolean, [key: string]: unknown}} Reason
 */

export {};
