// The case browser's data, as citelab.evals._case_browser writes it (short keys keep a big
// report small). Every value is untrusted and read defensively; these types say what each
// key is meant to hold.

/**
 * @typedef {object} ReportData
 * @property {Variant[]} variants
 * @property {string|null} baseline          the baseline variant's name
 * @property {{name: string, higher?: boolean}[]} metrics  higher: is a higher value better
 * @property {unknown[][]} sources           [uri, title, content] by index
 * @property {string[]} texts                long texts reasons refer to by index
 * @property {CaseEntry[]} cases
 *
 * @typedef {{name: string, color?: string, description?: string}} Variant
 *
 * @typedef {[number, number]} NumberedSource  [the number shown, the source's index]
 *
 * One scored turn: the list's keys, then (once opened) its details.
 * @typedef {object} CaseEntry
 * @property {number} v            variant index
 * @property {string} m            model
 * @property {string} d            dataset
 * @property {string} c            case id
 * @property {number} t            turn index
 * @property {string} q            question
 * @property {string} [e]          why the turn failed or could not be read
 * @property {string[]} [fail]     metrics it failed
 * @property {boolean} [diff]      differs from the baseline
 * @property {boolean} [na]        a no-answer message
 * @property {number} [fs]         searches the service forced first
 * @property {import("../contract/message.js").WireMessage} [msg]  the answer
 * @property {NumberedSource[]} [held]   the sources the turn held
 * @property {NumberedSource[]} [cited]  the final numbers of the cited ones
 * @property {Gold} [g]
 * @property {Record<string, [number|null, number, number]>} [s]  value, numerator, denominator
 * @property {Record<string, Reason[]>} [r]
 * @property {Round[]} [rounds]
 *
 * @typedef {{expect?: boolean, claims?: [string, string[]][], must_cite?: string[],
 *   must_not_cite?: string[], min_searches?: number}} Gold
 * A scorer's detail row: hit counts toward the value (good where higher is better, bad where
 * lower is); judgeable: false marks a unit left out (no passage to judge).
 * @typedef {{hit?: boolean, judgeable?: boolean, [key: string]: unknown}} Reason
 * @typedef {{visible?: NumberedSource[], added?: NumberedSource[], searches?: number,
 *   text?: string}} Round
 */

export {};
