/**
 * The small HTML pages the loopback server of `authorizeLocal` answers with (both lines), and the headers of every
 * page. Self-contained (inline CSS, no scripts, no external resources); every piece of text from outside goes
 * through {@link escapeHtml}, cleaned of control and invisible characters first.
 */
import { cleanUntrustedText } from "./redact.js"

/** Headers of every page: no caching, no Referer carrying the callback's query elsewhere, nothing active. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  connection: "close"
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}

/** Text made safe to place in HTML content or a quoted attribute. */
export const escapeHtml = (text: string): string =>
  cleanUntrustedText(text).replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char)

/** A page to send: status and HTML. */
export interface Page {
  readonly status: number
  readonly html: string
}

type Tone = "success" | "failure" | "neutral"

const ACCENT: Readonly<Record<Tone, string>> = { success: "#1a7f37", failure: "#cf222e", neutral: "#57606a" }
const ICON: Readonly<Record<Tone, string>> = { success: "&#10003;", failure: "&#10007;", neutral: "&#8505;" }

/** `title` and `paragraphs` are HTML: callers escape what they did not write. */
const layout = (tone: Tone, title: string, paragraphs: ReadonlyArray<string>): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · service-sdk</title>
<style>
  :root { color-scheme: light dark; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f6f8fa; color: #1f2328;
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  main { max-width: 32rem; margin: 1.5rem; padding: 2rem 2.25rem; background: #fff; border-radius: 12px;
    border-top: 6px solid ${ACCENT[tone]}; box-shadow: 0 4px 24px rgb(0 0 0 / 0.08); }
  h1 { display: flex; gap: 0.6rem; align-items: center; margin: 0 0 0.75rem; font-size: 1.35rem; }
  .icon { color: ${ACCENT[tone]}; font-size: 1.5rem; }
  p { margin: 0.5rem 0; }
  code { padding: 0.1rem 0.35rem; border-radius: 4px; background: #eff1f3; font-size: 0.95em; word-break: break-all; }
  @media (prefers-color-scheme: dark) {
    body { background: #0d1117; color: #e6edf3; }
    main { background: #161b22; }
    code { background: #21262d; }
  }
</style>
</head>
<body>
<main class="${tone}">
<h1><span class="icon" aria-hidden="true">${ICON[tone]}</span>${title}</h1>
${paragraphs.map((paragraph) => `<p>${paragraph}</p>`).join("\n")}
</main>
</body>
</html>
`

/** 200: the code was exchanged for tokens. */
export const successPage = (): Page => ({
  status: 200,
  html: layout("success", "Authorization complete", [
    "The application is now authorized.",
    "You can close this window and return to the application."
  ])
})

/**
 * The authorization failed: the Service's `error` (and `error_description`) when it sent one, else a description of
 * what was wrong with the callback (a state mismatch, a missing code, a rejected code exchange).
 */
export const failurePage = (failure: {
  readonly status?: number | undefined
  readonly error?: string | undefined
  readonly description?: string | undefined
}): Page => ({
  status: failure.status ?? 400,
  html: layout("failure", "Authorization failed", [
    ...(failure.error !== undefined ? [`Error: <code>${escapeHtml(failure.error)}</code>`] : []),
    ...(failure.description !== undefined && failure.description !== "" ? [escapeHtml(failure.description)] : []),
    "Return to the application to try again. You can close this window."
  ])
})

/** 409: a later callback, once the first one was received. */
export const alreadyReceivedPage = (): Page => ({
  status: 409,
  html: layout("neutral", "Already received", [
    "The application already received an authorization response.",
    "You can close this window."
  ])
})

/** 404: any path but the callback's. */
export const notFoundPage = (): Page => ({
  status: 404,
  html: layout("neutral", "Not found", ["This address only answers the authorization callback."])
})

/** 405: the callback path with a method other than GET. */
export const methodNotAllowedPage = (): Page => ({
  status: 405,
  html: layout("neutral", "Method not allowed", ["The authorization callback is a GET request."])
})

/** An SDK error as the failure page reads it (either line's `ServiceError`). */
export interface FlowError {
  readonly _tag: string
  readonly message: string
  readonly payload?:
    | { readonly error?: string | undefined; readonly error_description?: string | undefined }
    | undefined
}

/** The failure page for an error of the flow: the OAuth `error` when there is one, else the error's safe message. */
export const failurePageFor = (error: FlowError): Page => {
  if (error._tag === "AuthenticationError") {
    const payload = error.payload
    return payload !== undefined
      ? failurePage({ status: 400, error: payload.error, description: payload.error_description })
      : failurePage({ status: 400, description: error.message })
  }
  // The browser's request was fine; what failed was behind it (the token endpoint, the cache).
  return failurePage({ status: error._tag === "TransportError" ? 502 : 500, description: error.message })
}
