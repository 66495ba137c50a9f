// Run by tests/contract/test_layers_agree.py (pytest): sanitize every string of the JSON list
// named by CITELAB_LAYERS_IN with the front end's layer, and write the results to
// CITELAB_LAYERS_OUT, so that Python can compare them with nh3's. Skipped when run alone.
import { readFileSync, writeFileSync } from "node:fs";
import { expect, test } from "vitest";
import { sanitizeToString } from "../../render/sanitize.js";

const input = process.env.CITELAB_LAYERS_IN;
const output = process.env.CITELAB_LAYERS_OUT;

test.skipIf(!input || !output)("dump the front end's sanitized vectors for the Python comparison", () => {
  const vectors = JSON.parse(readFileSync(input, "utf8"));
  const results = vectors.map((vector) => ({ sanitized: sanitizeToString(vector) }));
  expect(results).toHaveLength(vectors.length);
  writeFileSync(output, JSON.stringify(results));
});
