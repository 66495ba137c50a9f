// Whether a view is on the page. JupyterLab redraws an output when its HTML is rewritten and
// never closes the old view, and its "full" windowing mode detaches cells scrolled out of
// sight and attaches them again later. A view that went on drawing into a detached root
// would cost more with every redraw (and keep its DOM alive), one that stopped for good
// would be stale when its cell comes back: so a view stops when its root leaves the document
// and carries on when it returns.
//
// The signal comes from a tiny hidden custom element inside the root: the browser calls its
// connected/disconnected callbacks exactly when the root is attached or detached, with no
// document-wide MutationObserver (JupyterLab mutates its DOM constantly) and no polling.

const TAG = "citelab-presence";

// Every bundle (chat, sources, message view, page) may define the element; the first one
// wins, so the class only forwards to a callback each instance carries.
/**
 * @typedef {HTMLElement & {citelabPresence?: ((onPage: boolean) => void)|null}} Sentinel
 */

/** @param {(Window & typeof globalThis)|null} win */
function defineSentinel(win) {
  const registry = win?.customElements;
  if (!win || !registry || !win.HTMLElement) return false;
  if (!registry.get(TAG)) {
    registry.define(
      TAG,
      class extends win.HTMLElement {
        connectedCallback() {
          /** @type {Sentinel} */ (this).citelabPresence?.(true);
        }

        disconnectedCallback() {
          /** @type {Sentinel} */ (this).citelabPresence?.(false);
        }
      },
    );
  }
  return true;
}

/**
 * Call `onChange(onPage)` whenever `root` is attached to or detached from its document.
 * Returns the function that stops watching. Where custom elements are not available it never
 * calls back; `hasLeft` still tells a view on its next update.
 * @param {HTMLElement} root
 * @param {(onPage: boolean) => void} onChange
 * @returns {() => void}
 */
export function watchPresence(root, onChange) {
  const doc = root.ownerDocument;
  if (!defineSentinel(doc.defaultView)) return () => {};
  const sentinel = /** @type {Sentinel} */ (doc.createElement(TAG));
  sentinel.hidden = true;
  sentinel.setAttribute("aria-hidden", "true");
  sentinel.citelabPresence = (onPage) => onChange(onPage);
  root.append(sentinel);
  return () => {
    sentinel.citelabPresence = null;
    sentinel.remove();
  };
}

/**
 * Tracks whether a root has been on the page: `hasLeft()` is true once a root that was
 * attached is detached (a root rendered before it is attached has not left).
 */
export class PresenceTracker {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.seen = root.isConnected;
  }

  hasLeft() {
    if (this.root.isConnected) {
      this.seen = true;
      return false;
    }
    return this.seen;
  }
}

/**
 * Subscribe to `store` while `root` is on the page: `requestDraw()` on every change, nothing
 * while the root is detached, and one redraw when it comes back. `listen()` adds what else the
 * view listens to while on the page and returns what removes it. Returns `{following, close()}`.
 * @param {HTMLElement} root
 * @param {{subscribe: (listener: () => void) => () => void}} store
 * @param {() => void} requestDraw
 * @param {() => () => void} [listen]
 * @returns {{readonly following: boolean, close: () => void}}
 */
export function subscribeWhileOnPage(root, store, requestDraw, listen = () => () => {}) {
  const tracker = new PresenceTracker(root);
  /** @type {(() => void)|null} */
  let unsubscribe = null;
  let closed = false;
  const onChange = () => {
    if (tracker.hasLeft()) pause(); // no custom elements here: notice it on the next change
    else requestDraw();
  };
  /** @type {(() => void)|null} */
  let unlisten = null;
  const follow = () => {
    unsubscribe = store.subscribe(onChange);
    unlisten = listen();
  };
  const pause = () => {
    if (unsubscribe === null) return;
    unsubscribe();
    unlisten?.();
    unsubscribe = unlisten = null;
  };
  const resume = () => {
    if (closed) return;
    if (unsubscribe === null) follow();
    requestDraw(); // also on a first attach: some drawing needs the page (focus)
  };
  follow();
  let onPage = root.isConnected;
  const unwatch = watchPresence(root, (now) => {
    if (now === onPage) return; // the watcher's own insertion into an attached root
    onPage = now;
    if (now) resume();
    else pause();
  });
  return {
    /** True while the view follows the store. */
    get following() {
      return unsubscribe !== null;
    },
    close() {
      closed = true;
      pause();
      unwatch();
    },
  };
}
