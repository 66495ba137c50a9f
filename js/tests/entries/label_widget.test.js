// The labeller's anywidget entry: state per model from initialize() on, labels and undo sent
// to the kernel, its traits and acks drawn, a lost kernel disabling the view.
import { describe, expect, test } from "vitest";
import labelWidget, { LABELLER_DISCONNECTED } from "../../entries/widget_label.js";
import { FakeModel } from "../helpers.js";

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));

function labelModel(traits = {}) {
  return new FakeModel({
    _model_key: "0123456789abcdef0123456789abcdef",
    item: {
      id: "run/a/citation-1",
      claim: "Fees are due in May.",
      passages: [{ number: 1, title: "Fees", uri: "entity:page/fees", text: "Fees are May." }],
      context: [],
      verdicts: [],
    },
    progress: { decided: 0, wanted: 2, skipped: 0 },
    last: null,
    notices: [],
    file_name: "labels.jsonl",
    show_verdicts: "after",
    _kernel_session: "",
    ...traits,
  });
}

function mount(model) {
  const cleanup = labelWidget.initialize({ model: model.proxy() });
  const el = document.createElement("div");
  document.body.append(el);
  const dispose = labelWidget.render({ model: model.proxy(), el });
  return { el, cleanup, dispose };
}

function press(el, key) {
  el.querySelector("section").dispatchEvent(
    new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }),
  );
}

describe("labeller widget", () => {
  test("a key sends the label of the pair shown; the kernel's answer moves it on", async () => {
    const model = labelModel();
    const { el, cleanup, dispose } = mount(model);
    expect(el.querySelector(".citelab-labeller-claim").textContent).toBe("Fees are due in May.");
    press(el, "y");
    const [sent] = model.sent;
    expect(model.sent).toHaveLength(1);
    expect(sent).toEqual({
      type: "label",
      id: "run/a/citation-1",
      label: "supported",
      request_id: sent.request_id,
    });
    // The kernel saves, then sets the traits and answers.
    model.set("last", { id: "run/a/citation-1", label: "supported", claim: "c", verdicts: [] });
    model.set("progress", { decided: 1, wanted: 2, skipped: 0 });
    model.set("item", {
      id: "run/b/citation-1",
      claim: "Rent is due monthly.",
      passages: [{ text: "Rent is due monthly." }],
    });
    model.custom({ type: "ack", request_id: model.sent[0].request_id });
    await nextFrame();
    expect(el.querySelector(".citelab-labeller-claim").textContent).toBe("Rent is due monthly.");
    expect(el.querySelector(".citelab-labeller-progress").textContent).toContain("1 of 2 decided");
    expect(el.querySelector('[role="status"]').textContent).toBe("Saved: supported.");
    press(el, "u");
    expect(model.sent.at(-1)).toEqual({ type: "undo", request_id: model.sent.at(-1).request_id });
    dispose();
    cleanup();
    el.remove();
  });

  test("a second view of the model shares its state: a request waiting shows in both", async () => {
    const model = labelModel();
    const first = mount(model);
    const el = document.createElement("div");
    document.body.append(el);
    const disposeSecond = labelWidget.render({ model: model.proxy(), el });
    press(first.el, "3");
    press(el, "3"); // the same request is still waiting
    expect(model.sent).toHaveLength(1);
    await nextFrame();
    expect(el.querySelector("section").getAttribute("aria-busy")).toBe("true");
    disposeSecond();
    first.dispose();
    first.cleanup();
    first.el.remove();
    el.remove();
  });

  test("a kernel that goes disables the labeller and says the labels are saved", async () => {
    const model = labelModel();
    const { el, cleanup, dispose } = mount(model);
    press(el, "1");
    model.emit("comm_live_update"); // JupyterLab's restart: the comm is dead
    await nextFrame();
    const alert = el.querySelector('[role="alert"]');
    expect(alert.textContent).toBe(LABELLER_DISCONNECTED);
    expect(alert.hidden).toBe(false);
    press(el, "2");
    expect(model.sent).toHaveLength(1);
    for (const button of el.querySelectorAll("button")) {
      expect(button.getAttribute("aria-disabled")).toBe("true");
    }
    dispose();
    cleanup();
    el.remove();
  });

  test("initialize before render listens from the start; cleanup removes every listener", () => {
    const model = labelModel();
    const { el, cleanup, dispose } = mount(model);
    dispose();
    cleanup();
    expect(model.listenerCount("msg:custom")).toBe(0);
    expect(model.listenerCount("change:item")).toBe(0);
    el.remove();
  });
});
