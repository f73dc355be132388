/**
 * Loopback helpers for the CLI: a free port, and a stand-in "browser" that follows the emulator's redirects.
 */
import * as Effect from "effect/Effect"
import * as Net from "node:net"

/** A port that was free a moment ago on 127.0.0.1. */
export const freeLoopbackPort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Opens `url` like a browser would (following redirects), for a consent page that approves by itself. */
export const visit = (url: string): Effect.Effect<void> =>
  Effect.tryPromise((signal) => fetch(url, { redirect: "follow", signal }).then((response) => response.text())).pipe(
    Effect.ignore
  )
