/**
 * The small HTML pages the loopback server answers with: a title and a line, every piece of text cleaned of
 * control and invisible characters and escaped.
 */
import { cleanUntrustedText } from "@service-sdk/shared/redact"

const escape = (text: string) => cleanUntrustedText(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A page with `title` and `detail` (plain text, escaped here). */
export const page = (title: string, detail: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1><p>${escape(detail)}</p></body></html>`
