/**
 * The test page, built from the package as an app would build it (esbuild, platform "browser": the package's
 * `browser` conditions: its entry and its `#file-cache` import), served from its own loopback origin; and Chromium, Debian's
 * `/usr/bin/chromium` through playwright-core, skipped loudly where it is missing (failed where
 * SERVICE_SDK_REQUIRE_BROWSER=1).
 */
import { build, type Metafile } from "esbuild"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"
export const hasChromium = existsSync(CHROMIUM)
/** In CI (SERVICE_SDK_REQUIRE_BROWSER=1) a missing Chromium fails rather than skips. */
export const required = process.env.SERVICE_SDK_REQUIRE_BROWSER === "1"

export const warnIfMissing = (what: string): void => {
  if (!hasChromium) console.warn(`\n⚠ ${what} SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium)\n`)
}

/** Bundles `entry` for the browser; `source` resolves the package to its TypeScript (tests need no build). */
export const bundle = async (
  entry: string,
  options: { readonly source?: boolean } = {}
): Promise<{ readonly code: string; readonly metafile: Metafile }> => {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    conditions: options.source === false ? [] : ["source"]
  })
  return { code: result.outputFiles[0]!.text, metafile: result.metafile }
}

export interface PageServer {
  readonly origin: string
  readonly close: () => Promise<void>
}

/** Serves the page (any path: the app is its own redirect target) and its script on 127.0.0.1. */
export const servePage = async (script: string): Promise<PageServer> => {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>service-sdk browser test</title></head><body><script type="module" src="/app.js"></script></body></html>`
  const server = Http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]
    if (path === "/app.js") {
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" })
      response.end(script)
    } else if (path === "/favicon.ico") {
      response.writeHead(404).end()
    } else {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
      response.end(html)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * Chromium with the project's flags and a fresh profile directory (removed by `close`): one browser context, so its
 * tabs share one origin's storage and Web Locks as a user's tabs do.
 */
export const launch = async (): Promise<{ readonly context: BrowserContext; readonly close: () => Promise<void> }> => {
  const profile = mkdtempSync(join(tmpdir(), "service-sdk-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  return {
    context,
    close: async () => {
      await context.close().catch(() => {})
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
