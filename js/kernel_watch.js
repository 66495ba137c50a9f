// Whether the kernel that holds a widget's Python object is still there. Measured in a real
// JupyterLab 4.6 with jupyterlab_widgets 3.0 and anywidget 0.11 (tests/browser):
// - Restart from JupyterLab's menu: the session says `restarting`, the widget manager sets
//   every model's comm dead (`comm_live_update`); the comm is never closed.
// - Restart from elsewhere (the REST API, another tab, `jupyter` tools): the widget manager
//   notices nothing and the model stays "live"; the only sign is the session's status
//   `starting` (the new kernel process says it on start-up) — questions sent then reach a
//   kernel that has no such widget and are dropped without a word.
// - Shut down, or another kernel picked: the session's kernel changes.
// So the chat listens to the model's comm events and to the session of the widget manager
// anywidget hands over (`model.widget_manager`). The manager's shape is JupyterLab's, not an
// anywidget promise: every step is checked, and where it is missing only the comm events count.

/** Session statuses that mean the kernel process which held the widget is gone. */
export const LOST_STATUSES = new Set(["starting", "restarting", "autorestarting", "dead"]);

/** Model events that mean the same: the comm went dead, or was closed. */
export const LOST_EVENTS = ["comm_live_update", "comm:close"];

function isSignal(value) {
  return Boolean(value) && typeof value.connect === "function" && typeof value.disconnect === "function";
}

/**
 * Call `onLost()` once the kernel behind `model` is gone (restart, shutdown, another kernel).
 * Returns the function that stops watching.
 */
export function watchKernel(model, onLost) {
  let lost = false;
  const lose = () => {
    if (lost) return;
    lost = true;
    onLost();
  };
  const stops = [];
  for (const name of LOST_EVENTS) {
    model.on(name, lose);
    stops.push(() => model.off(name, lose));
  }
  const connect = (signal, slot) => {
    signal.connect(slot);
    stops.push(() => signal.disconnect(slot));
  };
  const manager = model.widget_manager;
  const session = manager?.context?.sessionContext;
  const onStatus = (_, status) => {
    if (LOST_STATUSES.has(status)) lose();
  };
  if (session && isSignal(session.statusChanged)) {
    // A notebook's widget manager: its session outlives restarts and kernel changes.
    const kernelId = session.session?.kernel?.id ?? null;
    connect(session.statusChanged, onStatus);
    if (isSignal(session.kernelChanged)) {
      connect(session.kernelChanged, (_, change) => {
        if ((change?.newValue?.id ?? null) !== kernelId) lose();
      });
    }
  } else if (isSignal(manager?.kernel?.statusChanged)) {
    connect(manager.kernel.statusChanged, onStatus); // a manager bound to one kernel
  }
  return () => {
    for (const stop of stops.splice(0)) stop();
  };
}
