// A Sources panel: only the shared references list of one chat's turns. In the notebook it
// is its own widget fed the same messages as its chat; on the page it is an element the chat
// fills. It answers the chat's cite event by showing the cited card.
import { safeTurnId } from "./citations.js";
import { frameScheduler } from "./dom.js";
import { CITE_EVENT, ReferencesController, ReferencesSection } from "./references.js";

export class SourcesView {
  /**
   * @param {HTMLElement} root
   * @param {import("./store.js").ChatStore} store
   * @param {{heading?: string, schedule?: Function}} options
   */
  constructor(root, store, { heading = "Sources", schedule = frameScheduler } = {}) {
    this.root = root;
    this.store = store;
    root.classList.add("citelab", "citelab-sources-panel");
    this.section = new ReferencesSection(root, { heading });
    this.controller = new ReferencesController(this.section);
    this.requestDraw = schedule(() => this.draw());
    this.unsubscribe = store.subscribe(() => this.requestDraw());
    this.onCite = (event) => this.showCited(event.detail ?? {});
    root.ownerDocument.addEventListener(CITE_EVENT, this.onCite);
    this.draw();
  }

  draw() {
    this.controller.sync(this.store.turns());
  }

  showCited({ turnId, number, conversationId }) {
    const turns = this.store.turns();
    const turn = turns.find((candidate) => safeTurnId(candidate.turn_id) === turnId);
    if (!turn) return;
    if (conversationId && turn.conversation_id && conversationId !== turn.conversation_id) return;
    const card = this.section.target(turnId, number);
    if (!card) return;
    card.scrollIntoView?.({ block: "nearest" });
    card.classList.add("citelab-source-target");
    setTimeout(() => card.classList.remove("citelab-source-target"), 1500);
  }

  destroy() {
    this.unsubscribe();
    this.root.ownerDocument.removeEventListener(CITE_EVENT, this.onCite);
  }
}
