/**
 * The emulator in its worker thread, seen from the benchmarks: its URLs and credentials, and its request counters.
 */
import { Worker } from "node:worker_threads"
import type { EmulatorOptions, Stats } from "@service-sdk/emulator"

export interface WorkerEmulator {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly options: EmulatorOptions
  readonly stats: () => Promise<Stats>
  /** token requests answered so far */
  readonly tokenRequests: () => Promise<number>
  readonly close: () => Promise<void>
}

interface Ready {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
}

export const startWorkerEmulator = (options: EmulatorOptions): Promise<WorkerEmulator> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./emulatorWorker.js", import.meta.url), { workerData: options })
    const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
    let nextId = 0
    const call = <A>(op: "stats" | "close"): Promise<A> =>
      new Promise<A>((resolveCall, rejectCall) => {
        const id = nextId++
        pending.set(id, { resolve: resolveCall as (value: unknown) => void, reject: rejectCall })
        worker.postMessage({ id, op })
      })
    worker.once("error", reject)
    worker.on("message", (message: { ready?: Ready; id?: number; result?: unknown; error?: string }) => {
      if (message.ready !== undefined) {
        const ready = message.ready
        let closing: Promise<void> | undefined
        resolve({
          ...ready,
          options,
          stats: () => call<Stats>("stats"),
          tokenRequests: () => call<Stats>("stats").then((stats) => stats.tokenRequests.total),
          close: () => {
            closing ??= call<void>("close").then(
              () => worker.terminate().then(() => undefined),
              () => worker.terminate().then(() => undefined)
            )
            return closing
          }
        })
        return
      }
      const waiter = message.id === undefined ? undefined : pending.get(message.id)
      if (waiter === undefined) return
      pending.delete(message.id!)
      if (message.error !== undefined) waiter.reject(new Error(message.error))
      else waiter.resolve(message.result)
    })
  })
