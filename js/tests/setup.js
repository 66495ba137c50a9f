// A warning or an error logged by the code under test is a failure, as in the Python suite.
import { afterAll, afterEach } from "vitest";

const logged = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => logged.push(`console.${level}: ${args.join(" ")}`);
}

afterEach(() => {
  const messages = logged.splice(0);
  if (messages.length) throw new Error(messages.join("\n"));
});

// The files share one page (vitest.config.js: no isolation, so jsdom is built once per
// worker): what a file leaves in the page goes with it.
afterAll(() => {
  document.head.replaceChildren();
  document.body.replaceChildren();
  document.body.className = "";
  document.documentElement.removeAttribute("style");
});
