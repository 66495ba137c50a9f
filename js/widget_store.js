// The streamed state of a widget model, kept beside the model (front-end only): one store
// per model, connected to its custom messages and its `turns` trait.
import { ChatStore } from "./store.js";

const stores = new WeakMap();

/** Listen to `model` (idempotent). Returns the function that stops listening. */
export function connectStore(model) {
  const known = stores.get(model);
  if (known) return known.disconnect;
  const store = new ChatStore();
  store.setSnapshot(model.get("turns"));
  const onMessage = (message) => store.receive(message);
  const onTurns = () => store.setSnapshot(model.get("turns"));
  model.on("msg:custom", onMessage);
  model.on("change:turns", onTurns);
  const disconnect = () => {
    model.off("msg:custom", onMessage);
    model.off("change:turns", onTurns);
    stores.delete(model);
  };
  stores.set(model, { store, disconnect });
  return disconnect;
}

/** The store of a model (connecting it on first use). */
export function storeOf(model) {
  connectStore(model);
  return stores.get(model).store;
}
