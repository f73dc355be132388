/**
 * The emulator (an Effect 3 app) as a child process on a free loopback port: its built bin, started with the Node
 * running the tests; its control API over HTTP.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..", "..", "..")
export const emulatorBin = join(root, "packages", "emulator", "bin", "service-sdk-emulator.js")

export interface RunningEmulator {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly stats: () => Promise<{
    readonly tokenRequests: Record<string, number>
    readonly apiRequests: { readonly total: number; readonly byStatus: Record<string, number> }
  }>
  readonly control: (path: "config" | "faults" | "reset" | "revoke", body: unknown) => Promise<void>
  /** A signed-in user's tokens, through the consent page (auto-approve) and a code exchange (confidential client). */
  readonly signIn: (options?: { readonly userId?: string; readonly scope?: string }) => Promise<{
    readonly access_token: string
    readonly refresh_token: string
    readonly expires_in: number
  }>
  readonly stop: () => Promise<void>
}

export const startEmulator = async (args: ReadonlyArray<string> = []): Promise<RunningEmulator> => {
  if (!existsSync(join(root, "packages", "emulator", "dist", "bin.js"))) {
    throw new Error("the emulator is not built: run `npx tsc -b` at the repository root")
  }
  const child: ChildProcess = spawn(process.execPath, [emulatorBin, "--port", "0", "--auto-approve", ...args], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const url = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the emulator did not start:\n${output}`)), 20_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const found = Object.fromEntries([...output.matchAll(/export (SERVICE_SDK_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
      if (found.SERVICE_SDK_CLIENT_SECRET !== undefined) {
        clearTimeout(timer)
        resolve(found as Record<string, string>)
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk
    })
    child.on("exit", (code) => reject(new Error(`the emulator exited (${code}):\n${output}`)))
  })
  const authUrl = url.SERVICE_SDK_AUTH_URL!
  const control = async (path: string, body: unknown) => {
    const response = await fetch(`${authUrl}/__emulator/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (!response.ok) throw new Error(`emulator ${path}: ${response.status} ${await response.text()}`)
  }
  const clientId = url.SERVICE_SDK_CLIENT_ID!
  const clientSecret = url.SERVICE_SDK_CLIENT_SECRET!
  return {
    authUrl,
    apiUrl: url.SERVICE_SDK_API_URL!,
    clientId,
    clientSecret,
    stats: async () => (await (await fetch(`${authUrl}/__emulator/stats`)).json()) as never,
    control,
    signIn: async (options = {}) => {
      const redirectUri = "http://127.0.0.1:9/callback"
      const params = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        state: "s",
        login_hint: options.userId ?? "emulator-user",
        scope: options.scope ?? "user-read-private user-library-read"
      })
      const consent = await fetch(`${authUrl}/authorize?${params}`, { redirect: "manual" })
      const location = consent.headers.get("location")
      const code = location === null ? null : new URL(location).searchParams.get("code")
      if (code === null) throw new Error(`no code from /authorize (${consent.status} ${location})`)
      const token = await fetch(`${authUrl}/api/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`
        },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri })
      })
      if (!token.ok) throw new Error(`code exchange: ${token.status} ${await token.text()}`)
      return (await token.json()) as never
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
