import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["js/tests/**/*.test.js"],
    environment: "jsdom",
    setupFiles: ["js/tests/setup.js"],
    // One page per worker, not one per file: building jsdom for each of 30 files was most of
    // the run's work. The setup file clears what a file leaves in the page; each test makes
    // its own models (the widgets keep their state per model key and drop it on cleanup).
    // Checked with the files in shuffled orders (--sequence.shuffle.files).
    isolate: false,
    // Correctness tests, not timed ones: a loaded 2-core CI machine must not fail them.
    testTimeout: 60_000,
  },
});
