// Whether the kernel that holds a widget's Python object is still there. Measured in a real
// JupyterLab 4.6 with jupyterlab_widgets 3.0 and anywidget 0.11 (tests/browser):
// - Restart from JupyterLab's menu: the session says `restarting`, the widget manager sets
//   every model's comm dead (`comm_live_update`); the comm is never closed.
// - Restart from elsewhere (the REST API, another tab, `jupyter` tools): the widget manager
//   notices nothing and the model stays "live"; the only sign is the session's status
//   `starting` (the new kernel process says it on start-up) — questions sent then reach a
//   kernel that has no such widget and are dropped without a word.
//   That status is easily lost: the new process sends it once, as it starts, and the
//   server's subscription to its messages may not be connected again yet (seen in about one
//   REST restart in seven under load).
// - Shut down, or another kernel picked: the session's kernel changes.
// So the chat listens to the model's comm events and to the session of the widget manager
// anywidget hands over (`model.widget_manager`). It also knows the kernel process's own
// session id (the `_kernel_session` trait: `header.session` of every message that process
// sends): a reply or an iopub message from another session means a new process answers. The
// chat asks the kernel for its info (`check`) when someone comes back to it (focus), so a
// restart nothing announced is found before a question is typed. The manager's shape is
// JupyterLab's, not an anywidget promise: every step is checked, and where it is missing only
// the comm events count.

import { CHAT_TRAITS, trait } from "../contract/model.js";

/** Session statuses that mean the kernel process which held the widget is gone. */
export const LOST_STATUSES = new Set(["starting", "restarting", "autorestarting", "dead"]);

/** Model events that mean the same: the comm went dead, or was closed. */
export const LOST_EVENTS = ["comm_live_update", "comm:close"];

/** The trait holding the session id of the kernel process that holds the widget. */
export const KERNEL_SESSION_TRAIT = "_kernel_session";

/** How long a kernel-info check waits before a new check may ask again. */
export const CHECK_TIMEOUT_MS = 3000;

/**
 * What the watch reads of JupyterLab's objects: not an anywidget promise, so every step is
 * checked when it runs, and these types only name what is looked for.
 * @typedef {(sender: unknown, value: unknown) => void} Slot
 * @typedef {{connect: (slot: Slot) => void, disconnect: (slot: Slot) => void}} Signal
 * @typedef {{header?: {session?: string}, parent_header?: object}} KernelMessageLike
 * @typedef {{id?: string, requestKernelInfo?: () => unknown, statusChanged?: unknown}}
 *   KernelLike
 * @typedef {{iopubMessage?: unknown, statusChanged?: unknown, kernelChanged?: unknown,
 *   session?: {kernel?: KernelLike|null}|null}} SessionContextLike
 * @typedef {{context?: {sessionContext?: SessionContextLike}, kernel?: KernelLike}}
 *   ManagerLike
 */

/**
 * @param {unknown} value
 * @returns {value is Signal}
 */
function isSignal(value) {
  if (!value || typeof value !== "object") return false;
  const signal = /** @type {Partial<Signal>} */ (value);
  return typeof signal.connect === "function" && typeof signal.disconnect === "function";
}

/**
 * Call `onLost()` once the kernel behind `model` is gone (restart, shutdown, another kernel).
 * Returns `{ stop, check }`: `stop()` ends the watch; `check()` asks the kernel for its info
 * (one request at a time: a check while one waits for its reply, up to CHECK_TIMEOUT_MS,
 * joins it) and resolves once the reply has been looked at or that wait is over.
 * @param {import("../contract/model.js").WidgetModel} model
 * @param {() => void} onLost
 * @returns {{stop: () => void, check: () => Promise<void>}}
 */
export function watchKernel(model, onLost) {
  let lost = false;
  const lose = () => {
    if (lost) return;
    lost = true;
    onLost();
  };
  /** @type {(() => void)[]} */
  const stops = [];
  for (const name of LOST_EVENTS) {
    model.on(name, lose);
    stops.push(() => model.off(name, lose));
  }
  /**
   * @param {Signal} signal
   * @param {Slot} slot
   */
  const connect = (signal, slot) => {
    signal.connect(slot);
    stops.push(() => signal.disconnect(slot));
  };
  const manager = /** @type {ManagerLike|undefined} */ (model.widget_manager);
  const session = manager?.context?.sessionContext;
  /** @type {Slot} */
  const onStatus = (_, status) => {
    if (typeof status === "string" && LOST_STATUSES.has(status)) lose();
  };
  // Messages from the kernel process's session; a message from another one after that means
  // another process. (Messages the server makes itself, such as its own status reports,
  // answer no request: only messages with a parent header count.)
  const expected = String(trait(model, KERNEL_SESSION_TRAIT, CHAT_TRAITS));
  let confirmed = false;
  /** @param {unknown} received */
  const onMessage = (received) => {
    const msg = /** @type {KernelMessageLike|null|undefined} */ (received);
    const from = msg?.header?.session;
    const parent = msg?.parent_header;
    if (!expected || !from || !parent || Object.keys(parent).length === 0) return;
    if (from === expected) confirmed = true;
    else if (confirmed) lose();
  };
  if (session && isSignal(session.iopubMessage)) {
    connect(session.iopubMessage, (_, msg) => onMessage(msg));
  }
  /** @type {Promise<void>|null} */
  let pending = null;
  /** @param {() => unknown} requestKernelInfo */
  const ask = async (requestKernelInfo) => {
    // A request sent as the old process goes can be lost with it: after CHECK_TIMEOUT_MS the
    // next check asks again (a reply that comes later is still looked at).
    const reply = Promise.resolve(requestKernelInfo()).then(onMessage, () => {
      // A kernel that goes mid-request: its status or comm says so.
    });
    /** @type {ReturnType<typeof setTimeout>|undefined} */
    let timer;
    const waited = new Promise((resolve) => {
      timer = setTimeout(resolve, CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([reply, waited]);
    } finally {
      clearTimeout(timer);
      pending = null;
    }
  };
  const check = () => {
    const kernel = session?.session?.kernel ?? manager?.kernel;
    const request = kernel?.requestKernelInfo;
    if (lost || !expected || !kernel || typeof request !== "function") {
      return Promise.resolve();
    }
    pending ??= ask(() => request.call(kernel));
    return pending;
  };
  if (session && isSignal(session.statusChanged)) {
    // A notebook's widget manager: its session outlives restarts and kernel changes.
    const kernelId = session.session?.kernel?.id ?? null;
    connect(session.statusChanged, onStatus);
    if (isSignal(session.kernelChanged)) {
      connect(session.kernelChanged, (_, change) => {
        const next = /** @type {{newValue?: {id?: string}|null}|null|undefined} */ (change);
        if ((next?.newValue?.id ?? null) !== kernelId) lose();
      });
    }
  } else {
    const statusChanged = manager?.kernel?.statusChanged;
    if (isSignal(statusChanged)) connect(statusChanged, onStatus); // bound to one kernel
  }
  return {
    stop: () => {
      for (const stop of stops.splice(0)) stop();
    },
    check,
  };
}

/** What a chat says once its kernel is gone. */
export const DISCONNECTED_MESSAGE =
  "The kernel restarted or stopped, so this chat cannot answer any more. " +
  "Run its cell again for a new chat.";

// JupyterLab's widget manager marks a view whose model lost its kernel (a restart, a shut
// down kernel) with the class `jupyter-widgets-disconnected` on the view's element.
/**
 * @param {HTMLElement} el
 * @param {import("../state/store.js").ChatStore} store
 */
export function watchConnection(el, store) {
  const check = () => {
    if (el.classList.contains("jupyter-widgets-disconnected")) {
      store.setDisconnected(DISCONNECTED_MESSAGE);
    }
  };
  const win = /** @type {Window & typeof globalThis} */ (el.ownerDocument.defaultView);
  const observer = new win.MutationObserver(check);
  observer.observe(el, { attributes: true, attributeFilter: ["class"] });
  check();
  return observer;
}
