// A warning or an error logged by the code under test is a failure, as in the Python suite.
import { afterEach } from "vitest";

const logged = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => logged.push(`console.${level}: ${args.join(" ")}`);
}

afterEach(() => {
  const messages = logged.splice(0);
  if (messages.length) throw new Error(messages.join("\n"));
});
