import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["js/tests/**/*.test.js"],
    environment: "jsdom",
    setupFiles: ["js/tests/setup.js"],
  },
});
