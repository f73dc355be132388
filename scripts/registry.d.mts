/** Types of `scripts/registry.mjs` for the registry test. */
export interface RunningRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string
  /** the registry's storage folder (removed by `stop`) */
  readonly storage: string
  readonly stop: () => Promise<void>
  /** what verdaccio wrote to stderr */
  readonly output: () => string
}
export declare const startRegistry: (options?: { readonly timeoutMs?: number }) => Promise<RunningRegistry>
export declare const addUser: (url: string, name?: string, password?: string) => Promise<string>
