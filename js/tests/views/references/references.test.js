import { describe, expect, test } from "vitest";
import { referenceHref, referenceKey } from "../../../contract/reference.js";
import { ReferencesController } from "../../../views/references/controller.js";
import { linkCitations } from "../../../views/references/links.js";
import { ReferencesSection } from "../../../views/references/section.js";
import { container, reference } from "../../helpers.js";

describe("referenceKey", () => {
  test.each([
    [
      { entity_type: "node", entity_id: "5", url: "https://a", title: "A" },
      "entity\u0000node\u00005",
    ],
    [{ entity_type: "node", entity_id: 5 }, "entity\u0000node\u00005"],
    [{ entity_type: "node", url: "https://a", title: "A" }, "url\u0000https://a"],
    [{ entity_id: "5", title: "A" }, "label\u0000A"],
    [{ url: "", title: "" }, null],
    [{ uri: "entity:node/1" }, null],
    [null, null],
  ])("%j → %j", (ref, key) => {
    expect(referenceKey(ref)).toBe(key);
  });

  test("an entity id wins over a shared URL or title", () => {
    const a = { entity_type: "node", entity_id: "1", url: "/same", title: "Same" };
    const b = { entity_type: "node", entity_id: "2", url: "/same", title: "Same" };
    expect(referenceKey(a)).not.toBe(referenceKey(b));
  });
});

function newSection() {
  const root = container();
  return { root, section: new ReferencesSection(root) };
}

function cards(root) {
  return [...root.querySelectorAll("li.citelab-source")].map((li) => [
    li.dataset.refTurn,
    li.dataset.refIndex,
    li.querySelector(".citelab-source-title").textContent.split(" ")[0],
  ]);
}

describe("shared references section", () => {
  test("one card per source across turns; a repeat points at the first card", () => {
    const { root, section } = newSection();
    section.showReferences("t1", [
      reference(1, { entity_id: "10" }),
      reference(2, { entity_id: "11" }),
    ]);
    section.showReferences("t2", [
      reference(1, { entity_id: "11" }),
      reference(2, { entity_id: "12" }),
    ]);
    expect(root.querySelectorAll("li.citelab-source")).toHaveLength(3);
    const firstCardOf11 = section.target("t1", 2);
    expect(section.target("t2", 1)).toBe(firstCardOf11);
    expect(section.target("t2", 2).dataset.refTurn).toBe("t2");
    expect(section.target("t2", 3)).toBeNull();
  });

  test("re-rendering the current turn leaves earlier turns' elements alone", () => {
    const { root, section } = newSection();
    section.showReferences("t1", [reference(1), reference(2)]);
    const earlier = [...root.querySelectorAll('li[data-ref-turn="t1"]')];
    section.showPending("t2");
    expect(root.querySelector('li[data-ref-turn="t2"]').getAttribute("aria-busy")).toBe("true");
    section.showReferences("t2", [reference(3)]);
    section.showReferences("t2", [
      reference(1, { entity_id: "3" }),
      reference(2, { entity_id: "4" }),
    ]);
    expect([...root.querySelectorAll('li[data-ref-turn="t1"]')]).toEqual(earlier);
    expect(root.querySelectorAll('li[data-ref-turn="t2"]')).toHaveLength(2);
    expect(root.querySelector(".citelab-source-pending")).toBeNull();
  });

  test("sources without any key are never merged", () => {
    const { root, section } = newSection();
    const bare = { number: 1, uri: "", title: "" };
    section.showReferences("t1", [bare, { ...bare, number: 2 }]);
    section.showReferences("t2", [bare]);
    expect(root.querySelectorAll("li.citelab-source")).toHaveLength(3);
    expect(root.querySelector("li.citelab-source .citelab-source-title").textContent).toBe(
      "Untitled source",
    );
  });

  test("every link in a card opens in a new tab without an opener", () => {
    const { root, section } = newSection();
    section.showReferences("t1", [reference(1), reference(2, { url: "/relative/2" })]);
    const links = [...root.querySelectorAll("li a")];
    expect(links).toHaveLength(2);
    for (const link of links) {
      expect(link.getAttribute("target")).toBe("_blank");
      expect(link.getAttribute("rel")).toBe("noopener noreferrer");
    }
  });

  test("a card shows title, language and snippet as text", () => {
    const { root, section } = newSection();
    section.showReferences("t1", [reference(1, { langcode: "de", snippet: "Ein <b>Auszug</b>" })]);
    const card = root.querySelector("li");
    expect(card.querySelector("a").textContent).toBe("Source 1");
    expect(card.querySelector(".citelab-source-lang").textContent).toBe("de");
    expect(card.querySelector(".citelab-source-snippet").textContent).toBe("Ein <b>Auszug</b>");
    expect(card.querySelector("b")).toBeNull();
  });

  test("the section hides while it has nothing to show and clears on a new question", () => {
    const { root, section } = newSection();
    expect(root.hidden).toBe(true);
    section.showReferences("t1", [reference(1)]);
    expect(root.hidden).toBe(false);
    section.clear();
    expect(root.hidden).toBe(true);
    section.showReferences("t9", [reference(1)]);
    expect(section.target("t9", 1).dataset.refTurn).toBe("t9"); // not a duplicate any more
  });
});

describe("referenceHref", () => {
  test.each([
    [{ url: "https://a.org/x", uri: "entity:node/1" }, "https://a.org/x"],
    [{ url: "javascript:alert(1)", uri: "https://b.org" }, "https://b.org"],
    [{ url: "#frag", uri: "entity:node/1" }, null],
    [{ uri: "entity:node/1" }, null],
    [{ url: " " }, null],
    // A relative URI names a source, it is no page of this site: not a link (as in Python).
    [{ uri: "/logout" }, null],
    [{ uri: "logout" }, null],
    [{ uri: "//evil.example/x" }, null],
    [{ uri: "mailto:a@b.org" }, "mailto:a@b.org"],
    [{ url: "/pages/2", uri: "/logout" }, "/pages/2"],
  ])("%j → %j", (ref, href) => {
    expect(referenceHref(ref)).toBe(href);
  });
});

describe("controller and citation links", () => {
  const turn = (id, references, status = "done") => ({ turn_id: id, references, status });

  test("provisional references are replaced by the final ones", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    controller.sync([turn("t1", null, "pending")]);
    expect(root.querySelector(".citelab-source-pending")).not.toBeNull();
    controller.sync([turn("t1", [reference(1), reference(2), reference(3)], "streaming")]);
    expect(cards(root)).toHaveLength(3);
    controller.sync([turn("t1", [reference(1, { entity_id: "3", title: "Third" })])]);
    expect(cards(root)).toEqual([["t1", "1", "Third"]]);
  });

  test("only the changed (last) turn is re-rendered", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    const first = turn("t1", [reference(1)]);
    controller.sync([first]);
    const card = root.querySelector("li");
    expect(controller.sync([first, turn("t2", null, "pending")])).toEqual(["t2"]);
    expect(controller.sync([first, turn("t2", [reference(1)])])).toEqual(["t2"]);
    expect(root.querySelector("li")).toBe(card);
    expect(controller.sync([first, turn("t2", [reference(1)])].slice(0, 1))).toEqual([]);
  });

  // A card without its section's id (each section numbers its ids apart).
  const shape = (card) => card.outerHTML.replace(/ id="[^"]*"/, "");

  test("a turn's end keeps the unchanged cards: retrieved ones turn cited, as if built so", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    const refs = [reference(1), reference(2), reference(3, { restricted: true })];
    controller.sync([turn("t1", refs, "streaming")]);
    const streamed = [...root.querySelectorAll("li.citelab-source")];
    expect(streamed.every((card) => card.dataset.state === "retrieved")).toBe(true);
    // The final list is a new (equal) array, as every kernel message brings.
    expect(controller.sync([turn("t1", structuredClone(refs))])).toEqual(["t1"]);
    const final = [...root.querySelectorAll("li.citelab-source")];
    expect(final.map((card, index) => card === streamed[index])).toEqual([true, true, true]);
    expect(root.querySelector(".citelab-source-state")).toBeNull();
    const fresh = newSection();
    fresh.section.showReferences("t1", refs);
    const built = [...fresh.root.querySelectorAll("li.citelab-source")];
    expect(final.map(shape)).toEqual(built.map(shape));
    expect(section.detailsOf(final[0])).toEqual({ reference: refs[0], retrieved: false });
  });

  test("a changed source gets a new card; the rest stay, in the new order", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    controller.sync([turn("t1", [reference(1), reference(2), reference(3)], "streaming")]);
    const [one, two] = root.querySelectorAll("li.citelab-source");
    controller.sync([
      turn("t1", [reference(2, { title: "Changed" }), reference(1), reference(4)]),
    ]);
    const shown = [...root.querySelectorAll("li.citelab-source")];
    expect(cards(root)).toEqual([
      ["t1", "2", "Changed"],
      ["t1", "1", "Source"],
      ["t1", "4", "Source"],
    ]);
    expect(shown[1]).toBe(one);
    expect(shown[0]).not.toBe(two);
    expect(two.isConnected).toBe(false);
    expect(section.target("t1", 1)).toBe(one);
  });

  test("a cited card is rebuilt, not reused, when its source shows as retrieved again", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    controller.sync([turn("t1", [reference(1)])]);
    const cited = root.querySelector("li.citelab-source");
    controller.sync([turn("t1", [reference(1)], "streaming")]);
    const card = root.querySelector("li.citelab-source");
    expect(card).not.toBe(cited);
    expect(card.querySelector(".citelab-source-state").textContent).toBe(
      "Retrieved, not yet cited",
    );
  });

  test("linkTargets changes only when a marker would link elsewhere or read another title", () => {
    const { section } = newSection();
    const controller = new ReferencesController(section);
    controller.sync([turn("t1", [reference(1), reference(2)], "streaming")]);
    const before = section.linkTargets("t1");
    controller.sync([turn("t1", [reference(1), reference(2)])]);
    expect(section.linkTargets("t1")).toBe(before);
    controller.sync([turn("t1", [reference(1), reference(2, { title: "Renamed" })])]);
    expect(section.linkTargets("t1")).not.toBe(before);
    expect(section.linkTargets("t1")).toContain("Renamed");
    expect(section.linkTargets("t2")).toBe("");
  });

  test("a new conversation clears every card", () => {
    const { root, section } = newSection();
    const controller = new ReferencesController(section);
    controller.sync([turn("t1", [reference(1)]), turn("t2", [reference(2)])]);
    controller.sync([turn("t3", [reference(1)])]);
    expect(cards(root)).toEqual([["t3", "1", "Source"]]);
  });

  test("citation links point at cards; a number without a card is no link", () => {
    const { section } = newSection();
    section.showReferences("t1", [reference(1)]);
    section.showReferences("t2", [reference(1), reference(2)]);
    const answer = container();
    answer.innerHTML =
      '<p><a href="#cite-t2-1" data-ref-turn="t2" data-ref-index="1">1</a>' +
      '<a href="#cite-t2-2" data-ref-turn="t2" data-ref-index="2">2</a>' +
      '<a href="#cite-t2-7" data-ref-turn="t2" data-ref-index="7">7</a>' +
      '<a href="#cite-t1-9" data-ref-turn="t1" data-ref-index="9">9</a></p>';
    linkCitations(answer, "t2", (id, n) => section.target(id, n));
    const [one, two, seven, other] = answer.querySelectorAll("a");
    expect(one.getAttribute("href")).toBe(`#${section.target("t1", 1).id}`);
    expect(two.getAttribute("href")).toBe(`#${section.target("t2", 2).id}`);
    expect(two.getAttribute("aria-label")).toBe("Source 2: Source 2");
    expect(seven.hasAttribute("href")).toBe(false);
    expect(seven.getAttribute("aria-disabled")).toBe("true");
    expect(other.getAttribute("href")).toBe("#cite-t1-9"); // another turn: untouched
  });
});
