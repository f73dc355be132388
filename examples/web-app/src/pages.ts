/**
 * The app's HTML pages. Every piece of text that comes from a request, the Service or the environment goes through
 * {@link escapeHtml}; pages carry no script.
 *
 * @since 1.0.0
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { ServiceClient } from "@service-sdk/effect"

/**
 * Escapes text for HTML element content and quoted attribute values.
 *
 * @since 1.0.0
 */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) =>
    char === "&" ? "&amp;" : char === "<" ? "&lt;" : char === ">" ? "&gt;" : char === '"' ? "&quot;" : "&#39;"
  )

/**
 * Headers on every page: never cached (they show one user's data), no referrer (the callback URL holds a code), no
 * framing, no script.
 *
 * @since 1.0.0
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const STYLE = `
:root { color-scheme: light; --accent: #1a7f4b; --muted: #5b6472; --line: #e3e6ea; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #1d2330; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { background: #fff; border-bottom: 1px solid var(--line); }
header .bar { max-width: 46rem; margin: 0 auto; padding: .8rem 1.2rem; display: flex; align-items: center; gap: 1rem; }
header .brand { font-weight: 700; flex: 1; }
main { max-width: 46rem; margin: 2rem auto; padding: 0 1.2rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 1.5rem; margin-bottom: 1.2rem; }
h1 { font-size: 1.5rem; margin: 0 0 .4rem; }
h2 { font-size: 1.1rem; margin: 0 0 .8rem; }
p { margin: .4rem 0; }
.muted { color: var(--muted); }
.button { display: inline-block; padding: .6rem 1.1rem; border-radius: 999px; background: var(--accent); color: #fff;
  text-decoration: none; font-weight: 600; border: 0; font-size: .95rem; cursor: pointer; }
.button.secondary { background: transparent; color: #1d2330; border: 1px solid #c5cad1; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: .8rem 0 0; }
dt { color: var(--muted); }
dd { margin: 0; }
ol.tracks { margin: 0; padding: 0; list-style: none; counter-reset: track; }
ol.tracks li { display: flex; gap: .8rem; padding: .55rem 0; border-top: 1px solid var(--line); counter-increment: track; }
ol.tracks li:first-child { border-top: 0; }
ol.tracks li::before { content: counter(track); color: var(--muted); width: 1.6rem; text-align: right; }
.track-name { font-weight: 600; }
.error h1 { color: #b42318; }
form.inline { display: inline; margin: 0; }
`

/**
 * A full page.
 *
 * @since 1.0.0
 */
export const page = (options: {
  readonly title: string
  readonly body: string
  readonly status?: number
  readonly signedInAs?: string | undefined
  readonly headers?: Readonly<Record<string, string>>
}): HttpServerResponse.HttpServerResponse => {
  const account =
    options.signedInAs === undefined
      ? `<a class="button secondary" id="sign-in" href="/login">Sign in</a>`
      : `<span class="muted">Signed in as <strong id="header-user">${escapeHtml(options.signedInAs)}</strong></span>
<form class="inline" method="post" action="/logout"><button class="button secondary" id="sign-out" type="submit">Sign out</button></form>`
  return HttpServerResponse.text(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)} · Listening room</title>
<style>${STYLE}</style>
</head>
<body>
<header><div class="bar"><a class="brand" href="/" style="color:inherit;text-decoration:none">Listening room</a>${account}</div></header>
<main>
${options.body}
</main>
</body>
</html>
`,
    {
      status: options.status ?? 200,
      contentType: "text/html; charset=utf-8",
      headers: { ...PAGE_HEADERS, ...options.headers }
    }
  )
}

/**
 * The page for visitors who are not signed in.
 *
 * @since 1.0.0
 */
export const welcomePage = (options: {
  readonly notice?: string | undefined
  readonly headers?: Record<string, string>
}) =>
  page({
    title: "Welcome",
    headers: options.headers ?? {},
    body: `<section class="card" id="welcome">
${options.notice === undefined ? "" : `<p id="notice" class="muted">${escapeHtml(options.notice)}</p>`}
<h1>Your music, in one place</h1>
<p>Sign in with your Service account to see your profile and the tracks you saved.</p>
<p style="margin-top:1.2rem"><a class="button" id="login" href="/login">Sign in with the Service</a></p>
</section>`
  })

const duration = (ms: number): string => {
  const seconds = Math.round(ms / 1000)
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`
}

/**
 * The signed-in user's page: profile and the first saved tracks.
 *
 * @since 1.0.0
 */
export const profilePage = (
  user: ServiceClient.User,
  saved: ServiceClient.Paging<ServiceClient.SavedTrack>
): HttpServerResponse.HttpServerResponse => {
  const name = user.display_name ?? user.id
  const details: Array<[string, string, string | undefined]> = [
    ["user-id", "User id", user.id],
    ["email", "Email", user.email],
    ["country", "Country", user.country],
    ["product", "Plan", user.product]
  ]
  const rows = details
    .filter(([, , value]) => value !== undefined)
    .map(([id, label, value]) => `<dt>${escapeHtml(label)}</dt><dd id="${id}">${escapeHtml(value!)}</dd>`)
    .join("")
  const tracks =
    saved.items.length === 0
      ? `<p id="no-tracks" class="muted">You have not saved any tracks yet.</p>`
      : `<ol class="tracks" id="saved-tracks">${saved.items
          .map(
            ({ track }) =>
              `<li data-track-id="${escapeHtml(track.id ?? "local")}"><div><div class="track-name">${escapeHtml(track.name)}</div>` +
              `<div class="muted">${escapeHtml(track.artists.map((artist) => artist.name).join(", "))}` +
              `${track.album === undefined ? "" : ` · ${escapeHtml(track.album.name)}`} · ${duration(track.duration_ms)}</div></div></li>`
          )
          .join("")}</ol>`
  return page({
    title: name,
    signedInAs: user.id,
    body: `<section class="card" id="profile">
<h1 id="display-name">${escapeHtml(name)}</h1>
<dl>${rows}</dl>
</section>
<section class="card">
<h2>Saved tracks <span class="muted" id="saved-total">(${saved.items.length} of ${saved.total})</span></h2>
${tracks}
</section>`
  })
}

/**
 * A clear error page: what happened, and what to do next.
 *
 * @since 1.0.0
 */
export const errorPage = (options: {
  readonly status: number
  readonly code: string
  readonly title: string
  readonly detail: string
  readonly headers?: Readonly<Record<string, string>>
}): HttpServerResponse.HttpServerResponse =>
  page({
    title: options.title,
    status: options.status,
    headers: options.headers ?? {},
    body: `<section class="card error" id="error" data-error="${escapeHtml(options.code)}">
<h1 id="error-title">${escapeHtml(options.title)}</h1>
<p id="error-detail">${escapeHtml(options.detail)}</p>
<p style="margin-top:1.2rem"><a class="button" id="login" href="/login">Sign in again</a>
<a class="button secondary" href="/">Home</a></p>
</section>`
  })
