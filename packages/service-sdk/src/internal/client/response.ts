/**
 * The responses `ServiceClient.http` hands out (the SDK's own requests use the answer's bytes, `requestPolicy.ts`).
 * Each is read in full within its attempt (so the attempt's timeout covers the
 * headers and the body, and the connection goes back to the pool at once), then made again with the platform's
 * public `HttpClientResponse.fromWeb` on the request as it was before the bearer token was attached: the platform's
 * own response, and every `ResponseError` its body readers raise, hold the request that was sent, Authorization
 * header included.
 *
 * The WHATWG `Response` under it is a subclass that serves the bytes already read: no body stream is built (Node's
 * `ReadableStream` costs as much as the rest of the request), and `text()` decodes them once. `body` (a stream) is
 * made only when asked for. The class is made on first use: touching the global `Response` at import is slow.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { bodyText } from "./body.js"

/** Statuses a WHATWG `Response` can carry. */
export const isRepresentable = (status: number): boolean => Number.isInteger(status) && status >= 200 && status <= 599

type Buffered = new (
  bytes: Uint8Array<ArrayBuffer> | undefined,
  status: number,
  headers: () => Readonly<Record<string, string>>
) => Response

let BufferedResponse: Buffered | undefined

const bufferedClass = (): Buffered =>
  (BufferedResponse ??= class BufferedResponse extends Response {
    readonly #bytes: Uint8Array<ArrayBuffer> | undefined
    readonly #record: () => Readonly<Record<string, string>>
    #headers: Headers | undefined
    #stream: ReadableStream<Uint8Array<ArrayBuffer>> | null | undefined

    constructor(
      bytes: Uint8Array<ArrayBuffer> | undefined,
      status: number,
      headers: () => Readonly<Record<string, string>>
    ) {
      super(null, { status })
      this.#bytes = bytes
      this.#record = headers
    }

    // made when asked for (most callers read the body only)
    override get headers(): Headers {
      if (this.#headers === undefined) this.#headers = new Headers(this.#record())
      return this.#headers
    }

    override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
      if (this.#stream === undefined) this.#stream = this.#bytes === undefined ? null : new Blob([this.#bytes]).stream()
      return this.#stream
    }

    override arrayBuffer(): Promise<ArrayBuffer> {
      return Promise.resolve(this.#bytes === undefined ? new ArrayBuffer(0) : this.#bytes.slice().buffer)
    }

    override text(): Promise<string> {
      return Promise.resolve(this.#bytes === undefined ? "" : bodyText(this.#bytes))
    }

    override json(): Promise<unknown> {
      return this.text().then(JSON.parse)
    }

    override blob(): Promise<Blob> {
      const type = this.headers.get("content-type") ?? ""
      return Promise.resolve(new Blob(this.#bytes === undefined ? [] : [this.#bytes], { type }))
    }

    override formData(): Promise<FormData> {
      return new Response(this.#bytes ?? null, { headers: this.headers }).formData()
    }

    override clone(): Response {
      return new (bufferedClass())(this.#bytes, this.status, this.#record)
    }
  })

/**
 * A response with `status`, `headers` (read when asked for) and the bytes of `body`, on `request` (the request
 * without credentials).
 */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: () => Readonly<Record<string, string>>,
  body: ArrayBuffer
): HttpClientResponse.HttpClientResponse => {
  // a 204/205/304 (or any empty answer) has a null body: a WHATWG Response refuses a body on those statuses
  const empty = body.byteLength === 0 || status === 204 || status === 205 || status === 304
  return HttpClientResponse.fromWeb(
    request,
    new (bufferedClass())(empty ? undefined : new Uint8Array(body), status, headers)
  )
}
