// Keeps a Sources section in step with the turns of a conversation.
import { isOpen } from "../../contract/model.js";

/** @typedef {import("../../contract/model.js").Turn} Turn */
/** @typedef {import("./section.js").ReferencesSection} ReferencesSection */

/**
 * Keeps a section in step with a list of turns, re-rendering from the first turn whose
 * references changed (normally only the last one, which is the current turn).
 */
/**
 * One turn as the section shows it.
 * @typedef {{turnId: string, references: Turn["references"], pending: boolean,
 *   retrieved: boolean, answer: number}} Rendering
 */

export class ReferencesController {
  /** @param {ReferencesSection} section */
  constructor(section) {
    this.section = section;
    /** @type {Rendering[]} */
    this.rendered = [];
  }

  /**
   * Returns the turn ids whose elements were re-rendered.
   * @param {Turn[]} turns
   * @returns {string[]}
   */
  sync(turns) {
    const wanted = turns.map((turn, index) => ({
      turnId: turn.turn_id,
      // A failed turn cited nothing: its retrieved sources are not shown.
      references:
        Array.isArray(turn.references) && turn.status !== "error" ? turn.references : null,
      pending: !Array.isArray(turn.references) && isOpen(turn.status),
      retrieved: isOpen(turn.status),
      answer: index + 1,
    }));
    let first = 0;
    while (first < wanted.length && sameRendering(wanted[first], this.rendered[first])) first++;
    if (first === wanted.length && first === this.rendered.length) return [];
    // Only the last turn changed, and it is still there (a turn's end, most often): its list
    // is redrawn where it is, keeping the cards that did not change (showReferences).
    const last = this.rendered.length - 1;
    const inPlace = first === last && wanted[first]?.turnId === this.rendered[last].turnId;
    if (inPlace) {
      if (!wanted[first].references) this.section.removeTurn(wanted[first].turnId);
    } else if (first === 0) this.section.clear();
    else
      for (const old of this.rendered.slice(first).reverse()) this.section.removeTurn(old.turnId);
    for (const turn of wanted.slice(first)) {
      if (turn.references) {
        const { retrieved, answer } = turn;
        this.section.showReferences(turn.turnId, turn.references, { retrieved, answer });
      }
      else if (turn.pending) this.section.showPending(turn.turnId);
    }
    this.rendered = wanted;
    return wanted.slice(first).map((turn) => turn.turnId);
  }
}

/**
 * @param {Rendering} a
 * @param {Rendering|undefined} b
 */
function sameRendering(a, b) {
  return (
    b !== undefined &&
    a.turnId === b.turnId &&
    a.references === b.references &&
    a.pending === b.pending &&
    a.retrieved === b.retrieved
  );
}
