import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["js/tests/**/*.test.js"],
    environment: "jsdom",
    setupFiles: ["js/tests/setup.js"],
    // Correctness tests, not timed ones: a loaded 2-core CI machine must not fail them.
    testTimeout: 60_000,
  },
});
