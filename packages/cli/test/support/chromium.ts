import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"

/** Debian's Chromium, driven through playwright-core (no browser download). */
export const CHROMIUM = "/usr/bin/chromium"
export const hasChromium = existsSync(CHROMIUM)
/** In CI (SERVICE_SDK_REQUIRE_BROWSER=1) a missing Chromium fails rather than skips. */
export const required = process.env.SERVICE_SDK_REQUIRE_BROWSER === "1"

export const warnIfMissing = (what: string): void => {
  if (!hasChromium) {
    console.warn(`\n⚠ ${what} SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium)\n`)
  }
}

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
  })

export { freePort } from "./ports.js"
