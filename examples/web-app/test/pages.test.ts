import { describe, expect, it } from "@effect/vitest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { errorPage, escapeHtml, profilePage } from "../src/pages.js"

const HOSTILE = `<script>alert("x")</script>' onload='x' &amp;`

const html = (response: HttpServerResponse.HttpServerResponse): string => {
  const body = response.body
  if (body._tag !== "Uint8Array") throw new Error(`unexpected body ${body._tag}`)
  return new TextDecoder().decode(body.body)
}

const track = (id: string, name: string, artist: string) => ({
  added_at: "2024-01-01T00:00:00Z",
  track: { id, name, artists: [{ id: "a1", name: artist }], duration_ms: 187_000, album: { id: "al", name: HOSTILE } }
})

describe("pages", () => {
  it("escapeHtml escapes the five characters that matter", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
    expect(escapeHtml("plain text")).toBe("plain text")
  })

  it.effect("the profile page escapes everything the Service sends", () =>
    Effect.sync(() => {
      const page = html(
        profilePage({ id: "u1", display_name: HOSTILE, email: HOSTILE, country: "SE", product: "premium" }, {
          items: [track(`id"><script>`, HOSTILE, HOSTILE)],
          total: 1,
          limit: 5,
          offset: 0,
          next: null
        } as never)
      )
      expect(page).not.toContain("<script>")
      expect(page).not.toContain(`' onload='`)
      expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x&#39; &amp;amp;")
      expect(page).toContain('data-track-id="id&quot;&gt;&lt;script&gt;"')
      expect(page).toContain("3:07")
    })
  )

  it("error pages are HTML, never cached, never framed, without referrer, and escape their text", () => {
    const response = errorPage({ status: 400, code: "x<y", title: HOSTILE, detail: HOSTILE })
    expect(response.status).toBe(400)
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(response.headers["referrer-policy"]).toBe("no-referrer")
    expect(response.headers["x-frame-options"]).toBe("DENY")
    expect(response.headers["content-security-policy"]).toContain("default-src 'none'")
    const page = html(response)
    expect(page).not.toContain("<script>")
    expect(page).toContain('data-error="x&lt;y"')
  })
})
