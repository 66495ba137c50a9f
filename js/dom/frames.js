// Work spread over animation frames: a redraw at most once per frame, and deferred work in
// slices short enough to keep a frame.

/**
 * Run `draw` at most once per animation frame however often `request` is called: tokens can
 * arrive much faster than frames, and each draw has a fixed cost.
 * @param {() => void} draw
 * @param {Window|undefined} [win]
 * @returns {() => void}  request a draw
 */
export function frameScheduler(draw, win = globalThis.window) {
  const raf = win?.requestAnimationFrame?.bind(win) ?? ((callback) => setTimeout(callback, 16));
  let queued = false;
  return function request() {
    if (queued) return;
    queued = true;
    raf(() => {
      queued = false;
      draw();
    });
  };
}

/** About how long one slice of deferred work may take (a frame is 16 ms at 60 Hz). */
export const SLICE_MS = 2;

/**
 * Run `work(hasTime)` once per animation frame, from the next frame on, until it returns
 * true; `hasTime()` is true while another step as long as the longest one of the slice so
 * far (the time between two calls) still ends within SLICE_MS, so a slice does not run over
 * by a step. Returns a function that cancels the slices still to come.
 * @param {(hasTime: () => boolean) => boolean} work
 * @param {Window|undefined} [win]
 * @returns {() => void}  cancel
 */
export function frameSlices(work, win = globalThis.window) {
  const frames = typeof win?.requestAnimationFrame === "function" ? win : null;
  /** @type {(run: () => void) => unknown} */
  const next = frames ? (run) => frames.requestAnimationFrame(run) : (run) => setTimeout(run, 16);
  /** @type {(id: unknown) => void} */
  const cancel = frames
    ? (id) => frames.cancelAnimationFrame(/** @type {number} */ (id))
    : (id) => clearTimeout(/** @type {ReturnType<typeof setTimeout>} */ (id));
  const clock = win?.performance ?? globalThis.performance;
  /** @type {unknown} */
  let pending = null;
  const slice = () => {
    let last = clock.now();
    const end = last + SLICE_MS;
    let longest = 0;
    const hasTime = () => {
      const now = clock.now();
      longest = Math.max(longest, now - last);
      last = now;
      return now + longest <= end;
    };
    pending = work(hasTime) ? null : next(slice);
  };
  pending = next(slice);
  return () => {
    if (pending !== null) cancel(pending);
    pending = null;
  };
}
