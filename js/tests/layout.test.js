// The folders of js/ are layers: a module imports only from its own folder or from a layer
// below it (README.md draws them), and nothing but a test imports a bundle entry.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { describe, expect, test } from "vitest";

const JS = join(import.meta.dirname, "..");

/** Layer of each top-level folder of js/: imports go to the same number or a lower one. */
const LAYERS = {
  contract: 0,
  dom: 1,
  render: 2,
  state: 3,
  views: 4,
  kernel: 5,
  page: 5,
  report: 5,
  entries: 6,
};

function sources(folder) {
  const found = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...sources(path));
    else if (name.endsWith(".js")) found.push(path);
  }
  return found;
}

function topFolder(path) {
  return relative(JS, path).split(sep)[0];
}

/** Every relative import of a module (static imports and re-exports), resolved. */
function importsOf(path) {
  const text = readFileSync(path, "utf8");
  const specs = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gms)];
  return specs.map((match) => join(dirname(path), match[1]));
}

const MODULES = Object.keys(LAYERS).flatMap((folder) => sources(join(JS, folder)));

describe("the layers of js/", () => {
  test("every module sits in a layer folder", () => {
    const loose = readdirSync(JS).filter((name) => name.endsWith(".js") && name !== "vitest.config.js");
    expect(loose).toEqual([]);
    expect(MODULES.length).toBeGreaterThan(30);
  });

  test.each(MODULES.map((path) => [relative(JS, path), path]))(
    "%s imports only its own layer or lower ones",
    (_, path) => {
      const own = topFolder(path);
      const wrong = importsOf(path)
        .map((target) => relative(JS, target))
        .filter((target) => {
          const folder = target.split(sep)[0];
          if (folder === own) return false;
          return !(folder in LAYERS) || LAYERS[folder] >= LAYERS[own];
        });
      expect(wrong).toEqual([]);
    },
  );

  test("the parser sees imports and re-exports", () => {
    const entry = join(JS, "entries", "page.js");
    const found = importsOf(entry).map((target) => relative(JS, target));
    expect(found).toContain(join("page", "mount.js"));
    expect(found).toContain(join("page", "client.js"));
  });
});
