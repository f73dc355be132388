/**
 * The order in which vitest starts test files, for both lines' configs (`vitest.config.ts`,
 * `packages/effect4/vitest.config.ts`): files whose path holds one of `hints` first, in the hints' order, the rest
 * after them, each group in the order vitest chose (its cached durations, or file size on a fresh clone). The
 * longest files then run beside the rest instead of becoming the tail of the run.
 *
 * @template {{ readonly moduleId: string }} F
 * @param {ReadonlyArray<string>} hints
 * @param {ReadonlyArray<F>} files
 * @returns {Array<F>}
 */
export const slowFirst = (hints, files) => {
  const rank = (file) => {
    const index = hints.findIndex((hint) => file.moduleId.includes(hint))
    return index === -1 ? hints.length : index
  }
  return files
    .map((file, index) => ({ file, index, rank: rank(file) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ file }) => file)
}
