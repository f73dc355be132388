import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { SCOPES } from "./fixtures.js"

/** Escapes text for HTML element content and quoted attribute values. @internal */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) =>
    char === "&" ? "&amp;" : char === "<" ? "&lt;" : char === ">" ? "&gt;" : char === '"' ? "&quot;" : "&#39;"
  )

const HEADERS = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer"
} as const

const STYLE = `
:root { color-scheme: light dark; --accent: #1db954; --muted: #6b7280; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #121212; color: #f5f5f5;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { width: min(28rem, 92vw); background: #1e1e1e; border-radius: 12px; padding: 2rem;
  box-shadow: 0 10px 30px rgb(0 0 0 / .4); }
h1 { font-size: 1.35rem; margin: 0 0 .5rem; }
p { margin: .5rem 0; color: #d4d4d4; }
.badge { display: inline-block; font-size: .75rem; letter-spacing: .05em; text-transform: uppercase; color: var(--accent);
  margin-bottom: 1rem; }
ul.scopes { list-style: none; padding: 0; margin: 1rem 0; }
ul.scopes li { padding: .6rem .8rem; margin: .4rem 0; background: #2a2a2a; border-radius: 8px; }
ul.scopes code { display: block; font-size: .8rem; color: var(--muted); }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { flex: 1; padding: .75rem 1rem; border-radius: 999px; border: 0; font-weight: 700; font-size: 1rem; cursor: pointer; }
#approve { background: var(--accent); color: #000; }
label { display: block; font-size: .85rem; color: var(--muted); margin-top: 1rem; }
#user { width: 100%; margin: .25rem 0 .5rem; padding: .6rem .8rem; border-radius: 8px; border: 1px solid #555;
  background: #2a2a2a; color: #f5f5f5; font: inherit; }
#deny { background: transparent; color: #f5f5f5; border: 1px solid #555; }
.error { color: #f87171; }
small { color: var(--muted); }
`

const page = (title: string, content: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<span class="badge">Service emulator</span>
${content}
</main>
</body>
</html>
`

/** The consent page: scopes, client, and a form posting the decision. @internal */
export const consentPage = (options: {
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string
  readonly requestId: string
  /** the user id the form offers (`login_hint`, else `emulator-user`) */
  readonly user: string
}): HttpServerResponse.HttpServerResponse => {
  const scopes = options.scope.split(" ").filter((s) => s.length > 0)
  const list =
    scopes.length === 0
      ? `<p id="no-scopes">No extra permissions: only your public profile.</p>`
      : `<ul class="scopes" id="scopes">${scopes
          .map(
            (scope) =>
              `<li data-scope="${escapeHtml(scope)}">${escapeHtml(SCOPES.get(scope) ?? scope)}<code>${escapeHtml(scope)}</code></li>`
          )
          .join("")}</ul>`
  let redirectOrigin = options.redirectUri
  try {
    redirectOrigin = new URL(options.redirectUri).origin
  } catch {
    // validated before; keep the raw text
  }
  return HttpServerResponse.text(
    page(
      "Authorize access",
      `<h1>Allow <span id="client-id">${escapeHtml(options.clientId)}</span> to access your account?</h1>
<form method="post" action="/authorize/decision">
<label for="user">Sign in as (emulated user id)</label>
<input id="user" name="user" type="text" value="${escapeHtml(options.user)}" required maxlength="64"
  pattern="[A-Za-z0-9_\\-]{1,64}" autocomplete="username" spellcheck="false">
<p>The app asks to:</p>
${list}
<input type="hidden" name="request_id" value="${escapeHtml(options.requestId)}">
<div class="actions">
<button id="deny" type="submit" name="decision" value="deny" formnovalidate>Cancel</button>
<button id="approve" type="submit" name="decision" value="approve">Approve</button>
</div>
</form>
<p><small>You will be sent back to <span id="redirect-origin">${escapeHtml(redirectOrigin)}</span>.</small></p>`
    ),
    { contentType: "text/html; charset=utf-8", headers: HEADERS }
  )
}

/** An error page for requests that must not redirect (RFC 6749 §4.1.2.1). @internal */
export const errorPage = (status: number, error: string, description: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(
    page(
      "Authorization error",
      `<h1 class="error">Something went wrong</h1>
<p id="error" data-error="${escapeHtml(error)}"><strong>${escapeHtml(error)}</strong></p>
<p id="error-description">${escapeHtml(description)}</p>`
    ),
    { status, contentType: "text/html; charset=utf-8", headers: HEADERS }
  )
