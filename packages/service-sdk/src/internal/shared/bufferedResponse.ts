// Copied from packages/shared/src/bufferedResponse.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The WHATWG `Response` that both lines' `ServiceClient.http` hands out (wrapped by each platform's
 * `HttpClientResponse.fromWeb`): the body was read in full within its attempt, so this subclass is constructed
 * without a body and serves the bytes it holds from `text()`, `json()`, `arrayBuffer()`, `blob()` and `formData()`.
 * Its `body` stream and its WHATWG `Headers` are built only when asked for (Node's `ReadableStream` and `Headers`
 * cost as much as the rest of a request to a local server). The class is made on first use: touching the global
 * `Response` at import is slow.
 */

/** Statuses a WHATWG `Response` can carry. */
export const isRepresentable = (status: number): boolean => Number.isInteger(status) && status >= 200 && status <= 599

type Buffered = new (
  bytes: Uint8Array<ArrayBuffer> | undefined,
  status: number,
  headers: () => Readonly<Record<string, string>>
) => Response

let BufferedResponse: Buffered | undefined
let decoder: TextDecoder | undefined

/** UTF-8, a leading BOM dropped: as `Response.text()` reads it. */
const utf8 = (): TextDecoder => {
  if (decoder === undefined) decoder = new TextDecoder()
  return decoder
}

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
      return Promise.resolve(this.#bytes === undefined ? "" : utf8().decode(this.#bytes))
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
 * A WHATWG `Response` with `status`, `headers` (read when asked for) and the bytes of `body`. A 204/205/304 (or any
 * empty answer) has a null body: a WHATWG `Response` refuses a body on those statuses.
 */
export const bufferedWebResponse = (
  status: number,
  headers: () => Readonly<Record<string, string>>,
  body: ArrayBuffer
): Response => {
  const empty = body.byteLength === 0 || status === 204 || status === 205 || status === 304
  return new (bufferedClass())(empty ? undefined : new Uint8Array(body), status, headers)
}
