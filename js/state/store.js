// The streamed state of one chat: the turns as the views should show them. Fed by kernel
// messages (or, on the page, by SSE events), and by the `turns` trait (the final state that
// survives a reload). Views subscribe and redraw at most once per animation frame.
import { isSettled, listOf, TURN_STATUSES } from "../contract/model.js";

/** @typedef {import("../contract/model.js").Turn} Turn */
/** @typedef {import("../contract/model.js").TurnEvent} TurnEvent */
/** @typedef {Turn["status"]} TurnStatus */
/** @typedef {{error?: string, document?: object}} Ack  what a request resolves with */
/**
 * What a person was doing in a view's question boxes (see focus.js).
 * @typedef {{name: string, root: HTMLElement, places: HTMLElement[]}} FocusMemory
 * @typedef {{drafts: Record<string, string>, focus: FocusMemory|null}} ViewMemory
 */

/** @type {Record<TurnStatus, number>} */
const RANK = { pending: 0, streaming: 1, done: 2, error: 2 };
const INTERRUPTED = Object.freeze({
  code: "interrupted",
  message: "the kernel went away before this answer finished.",
});

/**
 * A fresh turn as `turn_start` describes it.
 * @param {{turn_id: unknown, question?: unknown, followup?: unknown}} start
 * @returns {Turn}
 */
export function newTurn({ turn_id, question = "", followup = false }) {
  return {
    turn_id: String(turn_id),
    question: String(question),
    followup: Boolean(followup),
    status: "pending",
    text: "",
    references: null,
    suggested_replies: [],
    conversation_id: null,
    log_id: null,
    error: null,
    feedback: null,
  };
}

export class ChatStore {
  constructor() {
    /** @type {Turn[]} */
    this.snapshot = []; // the `turns` trait
    /** @type {Map<string, Turn>} */
    this.live = new Map(); // turn_id → turn, from messages
    /** @type {string[]} */
    this.liveOrder = [];
    /** @type {string|null} */
    this.resetAt = null; // turn_id of the latest new (non-follow-up) question seen live
    /** @type {Set<string>} */
    this.retired = new Set(); // turn_ids a new question cleared: their late events are ignored
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {Map<string, {resolve: (ack: Ack) => void, timer: ReturnType<typeof setTimeout>}>} */
    this.requests = new Map();
    this.nextRequest = 0;
    /** @type {Turn[]|null} */
    this.cached = null;
    // What a person was doing in a view (drafts, the focused question box), so a view that
    // replaces it carries on: see focus.js.
    /** @type {ViewMemory} */
    this.ui = { drafts: {}, focus: null };
    // A plain message when nothing can answer any more (the kernel restarted): views disable
    // their inputs and show it. null while connected.
    /** @type {string|null} */
    this.disconnected = null;
  }

  /**
   * Say that nothing answers any more (or, with null, that it does again). Nothing waits in
   * vain: requests still waiting for their ack get `message` as their error at once (a
   * question sent just before is handed back, not dropped), later requests get it without
   * being sent, and an answer still streaming is shown as interrupted.
   * @param {string|null} message
   */
  setDisconnected(message) {
    const value = message ? String(message) : null;
    if (value === this.disconnected) return;
    this.disconnected = value;
    if (value !== null) {
      for (const request_id of [...this.requests.keys()]) {
        this.settleRequest({ request_id, error: value });
      }
      for (const turn of this.turns()) {
        if (turn.status !== "pending" && turn.status !== "streaming") continue;
        this.putLive({ ...this.liveTurn(turn.turn_id), status: "error", error: INTERRUPTED });
      }
    }
    this.changed();
  }

  /** Forget the conversation shown (New conversation): live turns and the snapshot. */
  reset() {
    for (const id of this.liveOrder) this.retired.add(id);
    for (const turn of this.snapshot) this.retired.add(turn.turn_id);
    this.live.clear();
    this.liveOrder = [];
    this.snapshot = [];
    this.resetAt = null;
    this.changed();
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
    this.cached = null;
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * The `turns` trait changed (or was read at start-up).
   * @param {unknown} turns
   */
  setSnapshot(turns) {
    const previous = new Map(this.snapshot.map((turn) => [turn.turn_id, turn]));
    const incoming = Array.isArray(turns) ? turns.filter(isTurnLike).map(normalizeTurn) : [];
    // Every trait sync brings fresh objects; keep the old references list when it is equal,
    // so views do not rebuild cards that did not change.
    this.snapshot = incoming.map((turn) => {
      const old = previous.get(turn.turn_id);
      if (old && sameJson(old.references, turn.references)) turn.references = old.references;
      return turn;
    });
    this.changed();
  }

  /**
   * Apply one kernel → front-end message. Unknown messages are ignored.
   * @param {unknown} received  a KernelMessage (model.js), if it is one
   */
  receive(received) {
    if (!received || typeof received !== "object") return;
    const message = /** @type {import("../contract/model.js").KernelMessage} */ (received);
    if (message.type === "ack") {
      this.settleRequest(message);
      return;
    }
    if (message.type === "reset") {
      this.reset();
      return;
    }
    // Each handler takes its own message type, which `type` picks: one signature for all.
    const apply = /** @type {((store: ChatStore, message: TurnEvent) => void)|undefined} */ (
      Object.hasOwn(EVENTS, message.type) ? EVENTS[message.type] : undefined
    );
    if (!apply || message.turn_id === undefined || message.turn_id === null) return;
    if (this.retired.has(String(message.turn_id))) return;
    apply(this, message);
    this.changed();
  }

  /**
   * A turn as known now (live first), creating it from the snapshot or a stub.
   * @param {unknown} turnId
   * @returns {Turn}
   */
  liveTurn(turnId) {
    const id = String(turnId);
    let turn = this.live.get(id);
    if (!turn) {
      const known = this.snapshot.find((candidate) => candidate.turn_id === id);
      turn = known ?? { ...newTurn({ turn_id: id, followup: true }), status: "streaming" };
      this.putLive(turn);
    }
    return turn;
  }

  /** @param {Turn} turn */
  putLive(turn) {
    if (!this.live.has(turn.turn_id)) this.liveOrder.push(turn.turn_id);
    this.live.set(turn.turn_id, turn);
  }

  /**
   * Record a change to one turn (turns are replaced, never mutated, so views can diff).
   * @param {string} turnId
   * @param {Partial<Turn>} change
   */
  updateTurn(turnId, change) {
    const turn = this.liveTurn(turnId);
    this.putLive({ ...turn, ...change });
    this.changed();
  }

  /**
   * The turns to show, in order.
   * @returns {Turn[]}
   */
  turns() {
    this.cached ??= this.computeTurns();
    return this.cached;
  }

  /** @returns {Turn[]} */
  computeTurns() {
    let base = this.snapshot;
    if (this.resetAt !== null) {
      const start = base.findIndex((turn) => turn.turn_id === this.resetAt);
      base = start === -1 ? [] : base.slice(start);
    }
    const shown = base.map((turn) => newer(this.live.get(turn.turn_id), turn));
    const ids = new Set(shown.map((turn) => turn.turn_id));
    for (const id of this.liveOrder) {
      const turn = this.live.get(id);
      if (turn && !ids.has(id)) shown.push(turn);
    }
    return shown;
  }

  /**
   * Start a request to the kernel; resolves with the kernel's ack (`{error?}`).
   * @param {object} payload
   * @param {(message: object) => void} send
   * @param {{timeout?: number}} [options]
   * @returns {{request_id: string, ack: Promise<Ack>}}
   */
  request(payload, send, { timeout = 30_000 } = {}) {
    const request_id = `r${++this.nextRequest}-${Date.now().toString(36)}`;
    if (this.disconnected !== null) {
      return { request_id, ack: Promise.resolve({ error: this.disconnected }) };
    }
    /** @type {Promise<Ack>} */
    const ack = new Promise((resolve) => {
      const timer = setTimeout(
        () => this.settleRequest({ request_id, error: "The kernel did not answer." }),
        timeout,
      );
      this.requests.set(request_id, { resolve, timer });
    });
    send({ ...payload, request_id });
    return { request_id, ack };
  }

  /** @param {{request_id: string, error?: unknown, document?: unknown}} ack */
  settleRequest({ request_id, error, document }) {
    const pending = this.requests.get(request_id);
    if (!pending) return;
    this.requests.delete(request_id);
    clearTimeout(pending.timer);
    if (error) pending.resolve({ error: String(error) });
    else pending.resolve(document && typeof document === "object" ? { document } : {});
  }
}

/**
 * How each turn event changes the store (methods: each takes its own message type).
 * @type {{[K in TurnEvent["type"]]: (store: ChatStore, message: Extract<TurnEvent, {type: K}>) => void}}
 */
const EVENTS = {
  turn_start(store, message) {
    const turn = newTurn(message);
    if (!turn.followup) {
      for (const id of store.liveOrder) store.retired.add(id);
      store.live.clear();
      store.liveOrder = [];
      store.resetAt = turn.turn_id;
    }
    store.live.delete(turn.turn_id);
    store.liveOrder = store.liveOrder.filter((id) => id !== turn.turn_id);
    store.putLive(turn);
  },
  references(store, message) {
    const turn = store.liveTurn(message.turn_id);
    if (isSettled(turn.status)) return;
    store.putLive({ ...turn, references: listOf(message.references), status: "streaming" });
  },
  token(store, message) {
    const turn = store.liveTurn(message.turn_id);
    if (isSettled(turn.status) || typeof message.text !== "string") return;
    // The pieces are kept in a list shared by the turn's successive objects (appended to,
    // never changed): a view that drew `pieceCount` of them draws only the new ones, without
    // reading the whole text (see TurnView.renderText).
    const shared = Array.isArray(turn.pieces) && turn.pieces.length === turn.pieceCount;
    const pieces = shared && turn.pieces ? turn.pieces : []; // a new list: views read it all
    pieces.push(message.text);
    store.putLive({
      ...turn,
      text: turn.text + message.text,
      status: "streaming",
      pieces,
      pieceCount: pieces.length,
    });
  },
  done(store, message) {
    store.putLive(doneTurn(store.liveTurn(message.turn_id), message));
  },
  error(store, message) {
    const turn = store.liveTurn(message.turn_id);
    const error = { code: String(message.code ?? "error"), message: String(message.message ?? "") };
    store.putLive({ ...turn, status: "error", error });
  },
};

/**
 * A turn as its `done` event leaves it (live, or a conversation shown again from the
 * server's store, whose turns keep the done event their client got).
 * @param {Turn} turn
 * @param {Omit<import("../contract/model.js").DoneMessage, "type"|"turn_id">} message
 * @returns {Turn}
 */
export function doneTurn(turn, message) {
  const final = typeof message.text === "string";
  return {
    ...turn,
    status: "done",
    text: typeof message.text === "string" ? message.text : turn.text,
    ...(final ? { pieces: null, pieceCount: 0 } : {}), // the final text is not an extension
    references: listOf(message.references),
    suggested_replies: listOf(message.suggested_replies),
    conversation_id: message.conversation_id ?? turn.conversation_id,
    log_id: message.log_id ?? null,
    trace_id: message.trace_id ?? null,
    turn: message.turn ?? null,
    no_answer: Boolean(message.no_answer),
    message: message.message ?? null,
    rounds: message.rounds ?? turn.rounds ?? null,
  };
}

// Fields of a settled turn that only the kernel's trait may hold: the live messages of an
// older kernel carry no `rounds`, and feedback is recorded after `done`.
/** @type {("rounds"|"feedback")[]} */
const KERNEL_FIELDS = ["rounds", "feedback"];

// Live state wins unless the snapshot is further along (a reload mid-stream, then the
// final state arrived through the trait). A settled live turn takes what it lacks of the
// kernel's fields from the snapshot of the same turn.
/**
 * @param {Turn|undefined} live
 * @param {Turn} snapshot
 * @returns {Turn}
 */
function newer(live, snapshot) {
  if (!live) return snapshot;
  if (RANK[snapshot.status] > RANK[live.status]) return snapshot;
  if (!isSettled(live.status) || !isSettled(snapshot.status)) return live;
  const missing = KERNEL_FIELDS.filter((name) => live[name] == null && snapshot[name] != null);
  if (!missing.length) return live;
  /** @type {Turn} */
  const merged = { ...live };
  for (const name of missing) Object.assign(merged, { [name]: snapshot[name] });
  return merged;
}

/**
 * @param {unknown} a
 * @param {unknown} b
 */
function sameJson(a, b) {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * @param {unknown} value
 * @returns {value is {turn_id: unknown, [key: string]: unknown}}
 */
function isTurnLike(value) {
  return Boolean(value) && typeof value === "object" && value !== null && "turn_id" in value &&
    value.turn_id !== undefined;
}

/**
 * A turn of the trait as the views read it (missing fields get their defaults).
 * @param {{turn_id: unknown, [key: string]: unknown}} turn
 * @returns {Turn}
 */
function normalizeTurn(turn) {
  const status = /** @type {TurnStatus} */ (
    TURN_STATUSES.includes(/** @type {TurnStatus} */ (turn.status)) ? turn.status : "done"
  );
  return {
    ...newTurn(turn),
    ...turn,
    turn_id: String(turn.turn_id),
    status,
    text: typeof turn.text === "string" ? turn.text : "",
    references: Array.isArray(turn.references) ? turn.references : null,
    suggested_replies: listOf(turn.suggested_replies),
    pieces: null, // streamed pieces are the live state's own (see EVENTS.token)
    pieceCount: 0,
  };
}
