/**
 * Issue 10, point 6: the file cache's temp file is created exclusively (`wx`) and removed on any failed write.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

const token = new TokenInfo({ accessToken: Redacted.make("a"), expiresAt: 1e10 })

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "sdk-cache-write-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

/** The Node file system, with `writeFileString` creating the file (honouring its flag) and then failing: a full disk. */
const fullDisk = () =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) => ({
      ...real,
      writeFileString: (file: string, _data: string, options?: FileSystem.WriteFileStringOptions) =>
        Effect.flatMap(
          real.writeFileString(file, "", options),
          () =>
            new PlatformError.SystemError({
              module: "FileSystem",
              method: "writeFile",
              reason: "Unknown",
              description: "ENOSPC: no space left on device",
              pathOrDescriptor: file
            })
        )
    }))
  ).pipe(Layer.provide(NodeFileSystem.layer))

describe("TokenCache.file write path", () => {
  it.scoped("a failed write leaves no temp file behind, and the temp file is opened with wx", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "tokens.json")
      const cache = yield* TokenCache.file(file).pipe(Effect.provide(fullDisk()))
      for (let i = 0; i < 3; i++) {
        const exit = yield* Effect.exit(cache.set(token))
        expect(Exit.isFailure(exit)).toBe(true)
      }
      expect(yield* Effect.promise(() => fs.readdir(dir))).toEqual([])
      const real = yield* TokenCache.file(file).pipe(Effect.provide(NodeFileSystem.layer))
      yield* real.set(token)
      expect(yield* Effect.promise(() => fs.readdir(dir))).toEqual(["tokens.json"])
    })
  )

  it.scoped("the temp file is created exclusively: a planted file at its name is never written through", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "tokens.json")
      const seen: Array<string | undefined> = []
      const recording = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(FileSystem.FileSystem, (real) => ({
          ...real,
          writeFileString: (target: string, data: string, options?: FileSystem.WriteFileStringOptions) => {
            seen.push(options?.flag)
            return real.writeFileString(target, data, options)
          }
        }))
      ).pipe(Layer.provide(NodeFileSystem.layer))
      const cache = yield* TokenCache.file(file).pipe(Effect.provide(recording))
      yield* cache.set(token)
      expect(seen).toEqual(["wx"])
    })
  )
})
