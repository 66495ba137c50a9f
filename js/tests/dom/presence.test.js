import { describe, expect, test } from "vitest";
import { PresenceTracker, subscribeWhileOnPage, watchPresence } from "../../dom/presence.js";
import { ChatStore } from "../../state/store.js";
import { container } from "../helpers.js";

describe("watching whether a root is on the page", () => {
  test("calls back on every attach and detach, until stopped", () => {
    const root = document.createElement("div");
    const seen = [];
    const stop = watchPresence(root, (onPage) => seen.push(onPage));
    expect(seen).toEqual([]); // rendered before it is attached: nothing yet
    document.body.append(root);
    root.remove();
    document.body.append(root);
    expect(seen).toEqual([true, false, true]);
    stop();
    root.remove();
    expect(seen).toEqual([true, false, true]);
    expect(root.querySelector("citelab-presence")).toBeNull();
  });

  test("the watcher is hidden from people and from assistive technology", () => {
    const root = container();
    watchPresence(root, () => {});
    const sentinel = root.querySelector("citelab-presence");
    expect(sentinel.hidden).toBe(true);
    expect(sentinel.getAttribute("aria-hidden")).toBe("true");
  });

  test("a root has left only after it was on the page", () => {
    const root = document.createElement("div");
    const tracker = new PresenceTracker(root);
    expect(tracker.hasLeft()).toBe(false);
    document.body.append(root);
    expect(tracker.hasLeft()).toBe(false);
    root.remove();
    expect(tracker.hasLeft()).toBe(true);
  });
});

describe("following a store while on the page", () => {
  test("pauses when the root leaves, resumes with one redraw when it returns", () => {
    const store = new ChatStore();
    const root = container();
    let draws = 0;
    const subscription = subscribeWhileOnPage(root, store, () => draws++);
    store.changed();
    expect(draws).toBe(1);
    root.remove();
    expect(subscription.following).toBe(false);
    expect(store.listeners.size).toBe(0);
    store.changed();
    expect(draws).toBe(1);
    document.body.append(root);
    expect(subscription.following).toBe(true);
    expect(draws).toBe(2);
    subscription.close();
    expect(store.listeners.size).toBe(0);
  });

  test("listens to more while on the page only", () => {
    const store = new ChatStore();
    const root = container();
    const log = [];
    const listen = () => {
      log.push("listen");
      return () => log.push("unlisten");
    };
    const subscription = subscribeWhileOnPage(root, store, () => {}, listen);
    root.remove();
    document.body.append(root);
    subscription.close();
    expect(log).toEqual(["listen", "unlisten", "listen", "unlisten"]);
  });

  test("without custom elements, a root that left is noticed on the next change", () => {
    const store = new ChatStore();
    // A document without custom elements (an old or stripped-down host).
    const root = { isConnected: true, ownerDocument: { defaultView: {} } };
    let draws = 0;
    const subscription = subscribeWhileOnPage(root, store, () => draws++);
    store.changed();
    root.isConnected = false;
    store.changed();
    expect(draws).toBe(1);
    expect(subscription.following).toBe(false);
    expect(store.listeners.size).toBe(0);
  });
});
