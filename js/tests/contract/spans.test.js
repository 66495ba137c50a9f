// Where a reference's cited spans sit in a document (contract/spans.js): the server's offsets
// are code points into the cited translation's content; the browser slices UTF-16 units.
import { describe, expect, test } from "vitest";
import { citedSpansOf, conversationSpans, spanRanges } from "../../contract/spans.js";
import { reference } from "../helpers.js";

/** `text`'s offsets in `content` in code points, as the server computes them. */
function codePoints(content, text) {
  const at = content.indexOf(text);
  const start = [...content.slice(0, at)].length;
  return { text, start, end: start + [...text].length };
}

const sliced = (content, ranges) => ranges.map(({ start, end }) => content.slice(start, end));

describe("placing cited spans in a document", () => {
  test("code point offsets after emoji are converted to UTF-16 units", () => {
    const content = "🎓🎓 Welcome. The fee is 312 €. 👍 Pay by June.";
    const fee = codePoints(content, "The fee is 312 €.");
    const june = codePoints(content, "Pay by June.");
    expect(fee.start).toBe(content.indexOf("The fee") - 2); // two emoji: two units more each
    expect(sliced(content, spanRanges(content, [june, fee]))).toEqual([
      "The fee is 312 €.",
      "Pay by June.",
    ]);
  });

  test("a combining mark is one code point and one unit (not one character with its base)", () => {
    const content = "Cafe\u0301 Mensa opens at 8. Re\u0301sume\u0301 desk at 9.";
    const desk = codePoints(content, "Re\u0301sume\u0301 desk at 9.");
    const graphemes = [...new Intl.Segmenter().segment(content.slice(0, content.indexOf("R")))];
    expect(desk.start).not.toBe(graphemes.length); // counting user-perceived characters is wrong
    expect(sliced(content, spanRanges(content, [desk]))).toEqual(["Re\u0301sume\u0301 desk at 9."]);
  });

  test("a text found twice is marked where its offsets say", () => {
    const content = "Fee: 5 €. Late fee: 9 €. Fee: 5 €.";
    const second = { text: "Fee: 5 €.", start: 25, end: 34 };
    expect(content.slice(second.start, second.end)).toBe(second.text); // no astral characters
    expect(spanRanges(content, [second])).toEqual([{ start: 25, end: 34 }]);
  });

  test("offsets that do not hold fall back to the text; a text not there is not marked", () => {
    const content = "One. Two. Three.";
    const stale = { text: "Three.", start: 0, end: 6 }; // offsets of another version
    const missing = { text: "Drei.", start: 10, end: 15 };
    const bare = { text: "Two." };
    const beyond = { text: "One.", start: 40, end: 44 };
    expect(sliced(content, spanRanges(content, [stale, missing, bare, beyond]))).toEqual([
      "One.",
      "Two.",
      "Three.",
    ]);
    expect(spanRanges(content, [missing])).toEqual([]);
    expect(spanRanges("", [bare])).toEqual([]);
  });

  test("overlapping, touching and repeated spans are joined; order is the document's", () => {
    const content = "Alpha beta. Gamma delta. Epsilon.";
    const spans = [
      codePoints(content, "Gamma delta."),
      codePoints(content, "Alpha beta."),
      codePoints(content, "beta. Gamma"),
      codePoints(content, "Alpha beta."),
    ];
    expect(sliced(content, spanRanges(content, spans))).toEqual(["Alpha beta. Gamma delta."]);
  });

  test("only spans with a text count; untrusted text is just text", () => {
    const ref = reference(1, {
      cited_spans: [
        { text: "  " },
        { start: 0, end: 3 },
        null,
        "text",
        { text: "<img src=x onerror=alert(1)>", start: 0, end: 28 },
      ],
    });
    expect(citedSpansOf(ref)).toEqual([{ text: "<img src=x onerror=alert(1)>", start: 0, end: 28 }]);
    expect(citedSpansOf(reference(2))).toEqual([]);
    expect(citedSpansOf(reference(3, { cited_spans: "x" }))).toEqual([]);
  });

  test("a source's spans over a conversation: every turn's, each once", () => {
    const first = reference(1, { cited_spans: [{ text: "A.", start: 0, end: 2 }] });
    const again = reference(4, {
      cited_spans: [
        { text: "B.", start: 3, end: 5 },
        { text: "A.", start: 0, end: 2 },
      ],
    });
    const other = reference(2, { entity_id: "9", cited_spans: [{ text: "C.", start: 6, end: 8 }] });
    again.entity_id = first.entity_id;
    expect(conversationSpans(first, [first, other, again]).map((span) => span.text)).toEqual([
      "A.",
      "B.",
    ]);
  });
});
