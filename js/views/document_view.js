// The local document view of an `entity:` source: the document's own text, with the sentence(s)
// the answer's claims rest on marked (the reference's cited spans; the retrieved passage when
// it has none, as older answers do: render/marked_text.js), shown inside the chat instead of
// a link to a page that may not exist (the demo corpora's `.example` URLs). A non-modal
// dialog: it takes the focus when it opens, Escape or Close shuts it and gives the focus back
// to what opened it.
// The document comes from the host (the kernel, or the page's API); every part is text.
import { referenceHref } from "../contract/reference.js";
import { iconButton } from "../dom/icons.js";
import { element, show, uniqueId } from "../dom/nodes.js";
import { markedText } from "../render/marked_text.js";

/** @typedef {import("../contract/model.js").Reference} Reference */
/** @typedef {import("./chat_view.js").SourceDocument} SourceDocument */

export class DocumentView {
  /**
   * @param {HTMLElement} root  the chat root
   * @param {{document: NonNullable<import("./chat_view.js").ChatHost["document"]>}} host
   */
  constructor(root, host) {
    const doc = root.ownerDocument;
    this.doc = doc;
    this.host = host;
    /** @type {Element|null} */
    this.opener = null;
    this.asked = 0;
    this.element = element(doc, "section", "citelab-document");
    this.element.setAttribute("role", "dialog");
    this.element.hidden = true;
    this.heading = element(doc, "h3", "citelab-document-title");
    this.heading.id = uniqueId("citelab-doc");
    this.heading.tabIndex = -1;
    this.element.setAttribute("aria-labelledby", this.heading.id);
    this.meta = element(doc, "p", "citelab-document-meta");
    this.status = element(doc, "p", "citelab-document-status");
    this.status.setAttribute("role", "status");
    this.body = element(doc, "div", "citelab-document-body");
    const close = iconButton(doc, "close", "Close", "citelab-document-close");
    close.addEventListener("click", () => this.close());
    this.element.append(close, this.heading, this.meta, this.status, this.body);
    this.element.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.stopPropagation();
      this.close();
    });
    root.append(this.element);
  }

  /** @param {Reference} reference */
  async open(reference) {
    const ask = ++this.asked;
    this.opener = this.doc.activeElement;
    this.heading.textContent = reference.title || reference.uri || "Document";
    this.meta.textContent = [reference.detail, reference.uri].filter(Boolean).join(" · ");
    this.status.textContent = "Loading the document…";
    show(this.status, true);
    this.body.replaceChildren();
    show(this.element, true);
    this.heading.focus({ preventScroll: true });
    this.element.scrollIntoView?.({ block: "nearest" });
    /** @type {{document?: SourceDocument, error?: string}} */
    let result;
    try {
      result = (await this.host.document(reference)) ?? {};
    } catch (error) {
      const message = /** @type {{message?: string}|null|undefined} */ (error)?.message;
      result = { error: message || "The document could not be loaded." };
    }
    if (ask !== this.asked) return; // another document was opened meanwhile
    if (result.error || !result.document) {
      this.status.textContent = `Could not open the document: ${result.error || "not found."}`;
      return;
    }
    this.fill(reference, result.document);
  }

  /**
   * @param {Reference} reference
   * @param {SourceDocument} document
   */
  fill(reference, document) {
    const { doc } = this;
    if (typeof document.title === "string" && document.title) {
      this.heading.textContent = document.title;
    }
    const content = typeof document.content === "string" ? document.content : "";
    show(this.status, false);
    this.status.textContent = "";
    const text = element(doc, "div", "citelab-document-text");
    text.append(...markedText(doc, content, reference));
    const parts = [text];
    const href = referenceHref({ url: document.url });
    if (href) {
      const link = element(doc, "a", "citelab-document-link", "Open the original page");
      link.setAttribute("href", href);
      link.setAttribute("target", "_blank");
      link.setAttribute("rel", "noopener noreferrer");
      const line = element(doc, "p", "", "");
      line.append(link);
      parts.push(line);
    }
    this.body.replaceChildren(...parts);
    this.body.querySelector("mark.citelab-cited")?.scrollIntoView?.({ block: "nearest" });
  }

  close() {
    show(this.element, false);
    this.asked++;
    const opener = this.opener;
    this.opener = null;
    if (opener?.isConnected) /** @type {HTMLElement} */ (opener).focus({ preventScroll: true });
  }
}
