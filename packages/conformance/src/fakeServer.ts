/**
 * The peer of every scenario: a real HTTP server on 127.0.0.1 that plays the Service's token endpoint
 * (`POST /api/token`) and data API (`/v1/...`), answers from a script and records every request, so a scenario can
 * check the wire (the contract (4)) the same way against either line.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** the body as a form (`application/x-www-form-urlencoded`), keys in the order sent */
  readonly form: ReadonlyArray<readonly [string, string]>
}

export interface Reply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** an object is sent as JSON; a string as it is */
  readonly body?: unknown
  /** close the connection without an answer */
  readonly destroy?: true
  /** answer this many ms after the request (the server has acted on it at once: a late answer) */
  readonly delayMs?: number
  /** this reply is only for a request whose form has this field with this value (others skip it) */
  readonly onlyFor?: readonly [string, string]
}

export interface FakeServer {
  /** `http://127.0.0.1:<port>`: the `authUrl`; the data API is at `${url}/v1` */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly tokenRequests: () => ReadonlyArray<RecordedRequest>
  readonly apiRequests: () => ReadonlyArray<RecordedRequest>
  /** the next token requests get these replies, in order; then the default (`token-<n>` for the n-th request) */
  readonly onToken: (...replies: ReadonlyArray<Reply>) => void
  /** the next data API requests get these replies, in order; then the default (200 with the album) */
  readonly onApi: (...replies: ReadonlyArray<Reply>) => void
  /** the token lifetime of default replies, in seconds (3600) */
  readonly setTokenLifetime: (seconds: number) => void
  /** hold every token request this long before answering */
  readonly setTokenDelay: (ms: number) => void
  readonly close: () => Promise<void>
}

export const ALBUM_ID = "6akEvsycLGftJxYudPjmqK"
export const album = {
  id: ALBUM_ID,
  name: "Conformance Album",
  artists: [{ id: "artist-1", name: "An Artist" }],
  tracks: { items: [{ id: "track-1", name: "A Track", duration_ms: 1000 }] }
}

const formOf = (body: string): ReadonlyArray<readonly [string, string]> => [...new URLSearchParams(body).entries()]

export const startFakeServer = async (): Promise<FakeServer> => {
  const requests: Array<RecordedRequest> = []
  const tokenQueue: Array<Reply> = []
  const apiQueue: Array<Reply> = []
  let tokenLifetime = 3600
  let tokenDelay = 0
  let issued = 0
  const defaultToken = (form: ReadonlyArray<readonly [string, string]>): Reply => {
    const grant = form.find(([key]) => key === "grant_type")?.[1]
    return {
      body: {
        access_token: `token-${issued}`,
        token_type: "Bearer",
        expires_in: tokenLifetime,
        ...(grant === "authorization_code" ? { refresh_token: `refresh-${issued}` } : {})
      }
    }
  }
  const send = (response: ServerResponse, reply: Reply) => {
    if (reply.destroy) {
      response.socket?.destroy()
      return
    }
    const text =
      reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)
    response.writeHead(reply.status ?? 200, {
      ...(typeof reply.body === "object" ? { "content-type": "application/json" } : {}),
      ...reply.headers
    })
    response.end(text)
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://127.0.0.1")
      const body = Buffer.concat(chunks).toString("utf8")
      const headers: Record<string, string> = {}
      for (const [key, value] of Object.entries(request.headers)) {
        if (typeof value === "string") headers[key] = value
        else if (Array.isArray(value)) headers[key] = value.join(", ")
      }
      const recorded: RecordedRequest = {
        method: request.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams.entries()),
        headers,
        body,
        form: formOf(body)
      }
      requests.push(recorded)
      if (recorded.path === "/api/token") {
        // the default token of the n-th token request is `token-<n>` (scripted replies count too)
        issued += 1
        const index = tokenQueue.findIndex(
          (queued) =>
            queued.onlyFor === undefined ||
            recorded.form.some(([key, value]) => key === queued.onlyFor![0] && value === queued.onlyFor![1])
        )
        const reply = (index === -1 ? undefined : tokenQueue.splice(index, 1)[0]) ?? defaultToken(recorded.form)
        const delay = reply.delayMs ?? tokenDelay
        if (delay > 0) setTimeout(() => send(response, reply), delay)
        else send(response, reply)
      } else if (recorded.path.startsWith("/v1/")) {
        send(response, apiQueue.shift() ?? { body: album })
      } else {
        send(response, { status: 404, body: { error: { status: 404, message: "Not found" } } })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tokenRequests: () => requests.filter((request) => request.path === "/api/token"),
    apiRequests: () => requests.filter((request) => request.path.startsWith("/v1/")),
    onToken: (...replies) => {
      tokenQueue.push(...replies)
    },
    onApi: (...replies) => {
      apiQueue.push(...replies)
    },
    setTokenLifetime: (seconds) => {
      tokenLifetime = seconds
    },
    setTokenDelay: (ms) => {
      tokenDelay = ms
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
