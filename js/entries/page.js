// Bundle entry of the standalone web page (`citelab serve`): mounts the chat on every
// `[data-citelab-page]` element once the document is read (no inline script needed).
import { mountAll } from "../page/mount.js";

export { storageKey } from "../page/client.js";
export { mountAll, mountPage } from "../page/mount.js";

if (typeof document !== "undefined") {
  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", () => mountAll());
  else mountAll();
}
