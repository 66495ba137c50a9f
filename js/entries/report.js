// Bundle entry of an evaluation report's case browser (report.html, `EvalResult.show()`):
// mounts every `[data-citelab-cases]` element of the page.
import { mountAll } from "../report/case_browser.js";

export { mountAll, mountCaseBrowser } from "../report/case_browser.js";

if (typeof document !== "undefined") mountAll(document);
