// A Sources panel: only the shared references list of one chat's turns. In the notebook it
// is its own widget fed the same messages as its chat; on the page it is an element the chat
// fills. It answers the chat's cite event by showing the cited card.
import { frameScheduler } from "../dom/frames.js";
import { subscribeWhileOnPage } from "../dom/presence.js";
import { safeTurnId } from "../render/citations.js";
import { ReferencesController } from "./references/controller.js";
import { CITE_EVENT } from "./references/links.js";
import { ReferencesSection } from "./references/section.js";

export class SourcesView {
  /**
   * @param {HTMLElement} root
   * @param {import("../state/store.js").ChatStore} store
   * @param {{heading?: string, schedule?: (draw: () => void) => () => void}} [options]
   */
  constructor(root, store, { heading = "Sources", schedule = frameScheduler } = {}) {
    this.root = root;
    this.store = store;
    root.classList.add("citelab", "citelab-sources-panel");
    this.section = new ReferencesSection(root, { heading });
    this.controller = new ReferencesController(this.section);
    this.closed = false;
    this.requestDraw = schedule(() => this.draw());
    const doc = root.ownerDocument;
    /** @param {Event} event */
    const onCite = (event) => this.showCited(/** @type {CustomEvent} */ (event).detail ?? {});
    const listen = () => {
      doc.addEventListener(CITE_EVENT, onCite);
      return () => doc.removeEventListener(CITE_EVENT, onCite);
    };
    this.subscription = subscribeWhileOnPage(root, store, () => this.requestDraw(), listen);
    this.draw();
  }

  draw() {
    // Before `subscription` is set, the constructor's own first draw.
    if (this.closed || this.subscription?.following === false) return;
    this.controller.sync(this.store.turns());
  }

  /**
   * Show the card a followed citation link points at (the chat's cite event).
   * @param {{turnId?: string, number?: number, conversationId?: string|null}} cited
   */
  showCited({ turnId, number, conversationId }) {
    const turns = this.store.turns();
    const turn = turns.find((candidate) => safeTurnId(candidate.turn_id) === turnId);
    if (!turn) return;
    if (conversationId && turn.conversation_id && conversationId !== turn.conversation_id) return;
    const card = this.section.target(turn.turn_id, Number(number));
    if (!card) return;
    card.scrollIntoView?.({ block: "nearest" });
    card.classList.add("citelab-source-target");
    setTimeout(() => card.classList.remove("citelab-source-target"), 1500);
  }

  destroy() {
    this.closed = true;
    this.subscription.close();
  }
}
