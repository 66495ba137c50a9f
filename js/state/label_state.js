// The state a labeller's views draw: the kernel's traits (the pair to label, progress, the
// last label, notices), the one request in flight (a label or an undo waits for the kernel's
// ack before another is sent: the kernel saves each label before it shows the next pair, so
// nothing moves on until the label is on disk), and whether the kernel is gone.
import { LABEL_TRAITS } from "../contract/model.js";

/** @typedef {import("../contract/model.js").LabelPair} LabelPair */
/** @typedef {import("../contract/model.js").LabelProgress} LabelProgress */
/** @typedef {import("../contract/model.js").LastLabel} LastLabel */
/** @typedef {{error?: string}} LabelAck */

/** How long a request waits for the kernel's ack. */
export const ACK_TIMEOUT_MS = 30_000;

/** What a labeller says once its kernel is gone. */
export const LABELLER_DISCONNECTED =
  "The kernel restarted or stopped, so this labeller cannot save any more. Every label " +
  "shown as saved is in the file: run the cell again to go on where you stopped.";

export class LabelState {
  constructor() {
    /** @type {LabelPair|null} */
    this.item = null;
    /** @type {LabelProgress} */
    this.progress = { decided: 0, wanted: 0, skipped: 0 };
    /** @type {LastLabel|null} */
    this.last = null;
    /** @type {string[]} */
    this.notices = [];
    this.fileName = "";
    this.showVerdicts = String(LABEL_TRAITS.show_verdicts);
    /** @type {{id: string, kind: "label"|"undo", label?: string,
     *   resolve: (ack: LabelAck) => void, timer: ReturnType<typeof setTimeout>}|null} */
    this.pending = null;
    /** @type {string|null} the kernel's refusal of the last request, for the person */
    this.error = null;
    /** @type {string|null} set once the kernel is gone */
    this.disconnected = null;
    this.nextRequest = 0;
    /** @type {Set<() => void>} */
    this.listeners = new Set();
  }

  /**
   * Take the kernel's traits (missing ones keep their defaults).
   * @param {(name: string) => unknown} get
   */
  read(get) {
    /** @param {string} name */
    const value = (name) => {
      const found = get(name);
      return found === undefined || found === null
        ? /** @type {Record<string, unknown>} */ (LABEL_TRAITS)[name]
        : found;
    };
    const item = value("item");
    this.item = item && typeof item === "object" ? /** @type {LabelPair} */ (item) : null;
    const progress = value("progress");
    this.progress = {
      decided: 0,
      wanted: 0,
      skipped: 0,
      ...(progress && typeof progress === "object" ? progress : {}),
    };
    const last = value("last");
    this.last = last && typeof last === "object" ? /** @type {LastLabel} */ (last) : null;
    const notices = value("notices");
    this.notices = Array.isArray(notices) ? notices.map(String) : [];
    this.fileName = String(value("file_name"));
    this.showVerdicts = String(value("show_verdicts"));
  }

  /**
   * @param {() => void} listener
   * @returns {() => void}  unsubscribe
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  changed() {
    for (const listener of [...this.listeners]) listener();
  }

  /** Whether a label or an undo may be sent now. */
  get ready() {
    return this.pending === null && this.disconnected === null;
  }

  /**
   * Send a label of the pair shown, or an undo; resolves with the kernel's ack. Refused
   * (resolved with an error, nothing sent) while another request waits or the kernel is gone.
   * @param {{type: "label", id: string, label: string}|{type: "undo"}} payload
   * @param {(message: object) => void} send
   * @returns {Promise<LabelAck>}
   */
  request(payload, send) {
    if (this.disconnected !== null) return Promise.resolve({ error: this.disconnected });
    if (this.pending !== null) return Promise.resolve({ error: "busy" });
    const request_id = `l${++this.nextRequest}-${Date.now().toString(36)}`;
    this.error = null;
    const ack = /** @type {Promise<LabelAck>} */ (
      new Promise((resolve) => {
        const timer = setTimeout(
          () => this.settle({ request_id, error: "The kernel did not answer: nothing was saved." }),
          ACK_TIMEOUT_MS,
        );
        this.pending = {
          id: request_id,
          kind: payload.type,
          ...(payload.type === "label" ? { label: payload.label } : {}),
          resolve,
          timer,
        };
      })
    );
    this.changed();
    send({ ...payload, request_id });
    return ack;
  }

  /**
   * A kernel message: an ack settles the request it answers.
   * @param {unknown} message
   */
  receive(message) {
    const data = /** @type {{type?: unknown, request_id?: unknown, error?: unknown}|null} */ (
      message
    );
    if (data?.type !== "ack" || typeof data.request_id !== "string") return;
    this.settle({ request_id: data.request_id, error: data.error });
  }

  /** @param {{request_id: string, error?: unknown}} ack */
  settle({ request_id, error }) {
    const pending = this.pending;
    if (!pending || pending.id !== request_id) return;
    this.pending = null;
    clearTimeout(pending.timer);
    this.error = error ? String(error) : null;
    pending.resolve(error ? { error: String(error) } : {});
    this.changed();
  }

  /**
   * The kernel is gone: nothing can be saved; a request waiting is told so.
   * @param {string} message
   */
  setDisconnected(message) {
    if (this.disconnected === message) return;
    this.disconnected = message;
    if (this.pending) this.settle({ request_id: this.pending.id, error: message });
    this.changed();
  }
}
