#!/usr/bin/env node
/**
 * A local npm registry (verdaccio, installed with the Effect 4 line's toolchain: it needs Node 22, so it runs on the
 * Node that project installs) for the registry test (scripts/test/registry.test.ts) and for trying a release by hand:
 *
 *   node scripts/registry.mjs        starts one on 127.0.0.1 (a free port, storage in a new temp folder) and prints
 *                                    one JSON line `{"url": "http://127.0.0.1:<port>/", "storage": "<dir>"}`;
 *                                    it stops on SIGINT/SIGTERM or when its standard input closes
 *
 * It serves and accepts only what is published to it (no uplink: `effect` and the rest come from npm's own registry,
 * an app's `.npmrc` routing only `@service-sdk/*` here); anyone may read, a registered user may publish
 * (`addUser` registers one and returns its token).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { effect4Dir, effect4Node } from "./effect4.mjs"

/** verdaccio's configuration: storage and users in `dir`, no uplink, no web UI, warnings only. */
const configuration = (dir) => ({
  self_path: dir,
  storage: join(dir, "storage"),
  auth: { htpasswd: { file: join(dir, "htpasswd") } },
  uplinks: {},
  packages: {
    "@service-sdk/*": { access: "$all", publish: "$authenticated", unpublish: "$authenticated" },
    "**": { access: "$all", publish: "$authenticated", unpublish: "$authenticated" }
  },
  web: { enable: false },
  log: { type: "stderr", format: "pretty", level: "warn" }
})

const serve = async () => {
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-registry-"))
  const { runServer } = createRequire(join(effect4Dir, "package.json"))("verdaccio")
  const server = await runServer(configuration(dir))
  const stop = () => {
    server.close()
    server.closeAllConnections?.()
    rmSync(dir, { recursive: true, force: true })
    process.exit(0)
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  process.stdin.on("end", stop)
  process.stdin.on("close", stop)
  process.stdin.resume()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address()
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/`, storage: dir })}\n`)
  })
}

/**
 * Starts a registry in a child process on the supported Node; resolves once it listens. `stop()` ends it (and its
 * storage). Rejects when it does not start within `timeoutMs`.
 */
export const startRegistry = ({ timeoutMs = 120_000 } = {}) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(effect4Node, [fileURLToPath(import.meta.url)], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`verdaccio did not start in ${timeoutMs} ms: ${stderr}`))
    }, timeoutMs)
    const stop = () =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done()
        child.once("exit", () => done())
        child.kill("SIGTERM")
      })
    child.stdout.on("data", (chunk) => {
      stdout += chunk
      const line = stdout.split("\n").find((candidate) => candidate.startsWith("{"))
      if (line === undefined || !stdout.includes("\n")) return
      clearTimeout(timer)
      const { url, storage } = JSON.parse(line)
      resolvePromise({ url, storage, stop, output: () => stderr })
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`verdaccio exited (${code}) before it listened: ${stderr}`))
    })
  })

/** Registers a user on the registry at `url` (CouchDB's user document, as `npm adduser` sends it); its token. */
export const addUser = async (url, name = "service-sdk-release", password = "a-password-for-the-test-only") => {
  const response = await fetch(new URL(`-/user/org.couchdb.user:${encodeURIComponent(name)}`, url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password, type: "user", roles: [] })
  })
  const body = await response.json()
  if (!response.ok || typeof body.token !== "string") {
    throw new Error(`registering ${name} failed: ${response.status} ${JSON.stringify(body)}`)
  }
  return body.token
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await serve()
