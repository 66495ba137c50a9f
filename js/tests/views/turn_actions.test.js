// Copy Markdown: the answer with its numbered sources, so pasted elsewhere `[n]` still says
// what it cites (#24: it copied bare markers).
import { describe, expect, test } from "vitest";
import { answerMarkdown } from "../../views/turn_actions.js";
import { reference } from "../helpers.js";

describe("answerMarkdown", () => {
  test("the text, then each cited source under the number the text uses", () => {
    const turn = {
      text: "Fees are due [1]. The MSc takes two years [3].",
      references: [
        reference(3, { title: "Data Science", detail: "MSc", url: "https://uni.example/ds" }),
        reference(1, { title: "Semester fee", url: "https://uni.example/fees" }),
      ],
    };
    expect(answerMarkdown(turn)).toBe(
      "Fees are due [1]. The MSc takes two years [3].\n\n" +
        "Sources:\n\n" +
        "- [1] [Semester fee](<https://uni.example/fees>)\n" +
        "- [3] [Data Science (MSc)](<https://uni.example/ds>)\n",
    );
  });

  test("titles are Markdown-escaped; a source without a web page shows its URI as code", () => {
    const turn = {
      text: "A [1][2].",
      references: [
        reference(1, { title: "*Bold* [x](javascript:alert(1)) <b>", url: null }),
        reference(2, { title: "Back`tick\nline", url: "javascript:alert(2)", uri: "entity:node/2" }),
      ],
    };
    expect(answerMarkdown(turn)).toBe(
      "A [1][2].\n\nSources:\n\n" +
        "- [1] \\*Bold\\* \\[x\\](javascript:alert(1)) \\<b\\> (`entity:node/1`)\n" +
        "- [2] Back\\`tick line (`entity:node/2`)\n",
    );
  });

  test("two sources of one title are told apart; a number is listed once", () => {
    const turn = {
      text: "X [1] and Y [2].",
      references: [
        reference(1, { title: "Data Science", detail: "MSc" }),
        reference(2, { title: "Data Science", detail: "BSc" }),
        reference(2, { title: "Data Science", detail: "BSc" }),
      ],
    };
    const lines = answerMarkdown(turn).split("\n").filter((line) => line.startsWith("- "));
    expect(lines).toEqual([
      "- [1] [Data Science (MSc)](<https://example.org/node/1>)",
      "- [2] [Data Science (BSc)](<https://example.org/node/2>)",
    ]);
  });

  test("no sources: the text alone", () => {
    expect(answerMarkdown({ text: "No answer.", references: [] })).toBe("No answer.");
    expect(answerMarkdown({ text: "No answer.", references: null })).toBe("No answer.");
  });
});
