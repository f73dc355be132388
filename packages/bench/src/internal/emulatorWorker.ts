/**
 * The worker thread the emulator runs in, so that its CPU work does not share the measured clients' event loop.
 * Started by `emulator.ts` with the emulator options as `workerData`; posts `{ ready }` with the URLs, then answers
 * `{ id, op }` messages (`stats`, `close`) with `{ id, result }` or `{ id, error }`.
 */
import { parentPort, workerData } from "node:worker_threads"
import { Emulator, type EmulatorOptions } from "@service-sdk/emulator"

const port = parentPort!
const emulator = await Emulator.start(workerData as EmulatorOptions)
port.on("message", async (message: { readonly id: number; readonly op: "stats" | "close" }) => {
  try {
    const result = message.op === "stats" ? await emulator.stats() : await emulator.close()
    port.postMessage({ id: message.id, result })
    if (message.op === "close") port.close()
  } catch (error) {
    port.postMessage({ id: message.id, error: String(error) })
  }
})
port.postMessage({
  ready: {
    authUrl: emulator.authUrl,
    apiUrl: emulator.apiUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret
  }
})
