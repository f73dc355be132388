/**
 * The one atomic write of a private file: an exclusive temp file beside the target (never through a file or link
 * someone placed there), mode 0600, renamed over the target (a link there is replaced, never followed), in a parent
 * directory created 0700. The file cache's entries and the CLI's saved login are written by it.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"

/** The directory part of `path` (`.` for a bare name). */
export const directoryOf = (path: string): string =>
  path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : "."

export const writeFileAtomic = (
  fs: FileSystem.FileSystem,
  path: string,
  text: string
): Effect.Effect<void, PlatformError> =>
  Effect.gen(function* () {
    yield* fs.makeDirectory(directoryOf(path), { recursive: true, mode: 0o700 })
    const tmp = `${path}.${(yield* Effect.random.pipe(Effect.flatMap((r) => r.nextIntBetween(0, 2 ** 31)))).toString(36)}.tmp`
    // removed on any failed write after it exists (a full disk must not leave empty temp files behind)
    const removeTmp = fs.remove(tmp).pipe(Effect.ignore)
    yield* fs
      .writeFileString(tmp, text, { flag: "wx", mode: 0o600 })
      .pipe(
        Effect.tapError((cause) =>
          cause._tag === "SystemError" && cause.reason === "AlreadyExists" ? Effect.void : removeTmp
        )
      )
    yield* Effect.zipRight(fs.chmod(tmp, 0o600), fs.rename(tmp, path)).pipe(Effect.tapError(() => removeTmp))
  })
