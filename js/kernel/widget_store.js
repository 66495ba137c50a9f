// Front-end state kept per widget model (the streamed turns every view of a chat draws).
//
// anywidget hands initialize() and each render() a different proxy object for one model, so
// the proxy cannot key that state: a view would get a store of its own that started late. The
// kernel syncs a `_model_key` trait (a unique hex id per widget) for this; without it (an older
// kernel, a test double) the model object is the key.
import { COMMON_TRAITS, trait } from "../contract/model.js";
import { ChatStore } from "../state/store.js";

/** @typedef {import("../contract/model.js").WidgetModel} WidgetModel */
/** @typedef {{state: unknown, unwire: (() => void)|null}} Entry */

/** @type {Map<string, Entry>} */
const byKey = new Map(); // _model_key → entry; an entry leaves when its model's cleanup runs
/** @type {WeakMap<WidgetModel, Entry>} */
const byModel = new WeakMap(); // model object → entry, for models without a key

/**
 * The `_model_key` of a model, or null when it has none.
 * @param {WidgetModel} model
 * @returns {string|null}
 */
export function modelKey(model) {
  const key = trait(model, "_model_key", COMMON_TRAITS);
  return typeof key === "string" && key !== "" ? key : null;
}

/**
 * @param {WidgetModel} model
 */
function lookup(model) {
  const key = modelKey(model);
  return key === null ? byModel.get(model) : byKey.get(key);
}

/**
 * @param {WidgetModel} model
 * @param {Entry} entry
 */
function remember(model, entry) {
  const key = modelKey(model);
  if (key === null) byModel.set(model, entry);
  else byKey.set(key, entry);
}

/**
 * @param {WidgetModel} model
 * @param {Entry} entry
 */
function forget(model, entry) {
  const key = modelKey(model);
  if (key === null) {
    if (byModel.get(model) === entry) byModel.delete(model);
  } else if (byKey.get(key) === entry) byKey.delete(key);
}

/**
 * Keep the state of `model` (made by `create(model)` the first time) and feed it from the
 * model's events: `wire(model, state)` adds the listeners and returns what removes them.
 * Called from initialize(); called again for the same model (anywidget re-initializes after a
 * module reload) it moves the listeners to the new proxy and keeps the state. Returns the
 * cleanup: stop listening and drop the state.
 * @template S
 * @param {WidgetModel} model
 * @param {(model: WidgetModel) => S} create
 * @param {(model: WidgetModel, state: S) => () => void} wire
 * @returns {() => void}
 */
export function connectState(model, create, wire) {
  /** @type {Entry|undefined} */
  let entry = lookup(model);
  if (!entry) {
    entry = { state: create(model), unwire: null };
    remember(model, entry);
  }
  const held = entry;
  held.unwire?.();
  const unwire = wire(model, /** @type {S} */ (held.state));
  held.unwire = unwire;
  return () => {
    if (held.unwire !== unwire) return; // a later connection took over
    unwire();
    held.unwire = null;
    forget(model, held);
  };
}

/**
 * The state of `model`, connecting it when initialize() did not (a host without it).
 * @template S
 * @param {WidgetModel} model
 * @param {(model: WidgetModel) => S} create
 * @param {(model: WidgetModel, state: S) => () => void} wire
 * @returns {S}
 */
export function stateOf(model, create, wire) {
  if (!lookup(model)) connectState(model, create, wire);
  return /** @type {S} */ (/** @type {Entry} */ (lookup(model)).state);
}

/**
 * A chat's (or a Sources panel's) store, fed by its custom messages and `turns` trait.
 * @param {WidgetModel} model
 */
function createChatStore(model) {
  const store = new ChatStore();
  store.setSnapshot(model.get("turns"));
  return store;
}

// Settings traits change what views draw: they notify through the store, so a view has one
// subscription to drop when it leaves the page.
const SETTINGS_EVENTS = [
  "change:feedback_enabled",
  "change:placeholder",
  "change:starter_questions",
];

/**
 * @param {WidgetModel} model
 * @param {ChatStore} store
 */
function wireChatStore(model, store) {
  /** @param {unknown} message */
  const onMessage = (message) => store.receive(message);
  const onTurns = () => store.setSnapshot(model.get("turns"));
  const onSettings = () => store.changed();
  model.on("msg:custom", onMessage);
  model.on("change:turns", onTurns);
  for (const name of SETTINGS_EVENTS) model.on(name, onSettings);
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:turns", onTurns);
    for (const name of SETTINGS_EVENTS) model.off(name, onSettings);
  };
}

/**
 * Listen to a chat or panel model (from initialize). Returns the cleanup.
 * @param {WidgetModel} model
 */
export function connectStore(model) {
  return connectState(model, createChatStore, wireChatStore);
}

/**
 * The store of a chat or panel model.
 * @param {WidgetModel} model
 */
export function storeOf(model) {
  return stateOf(model, createChatStore, wireChatStore);
}
