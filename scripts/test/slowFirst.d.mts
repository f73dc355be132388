/** Types of `scripts/test/slowFirst.mjs`: test files whose path holds one of `hints` first, in the hints' order. */
export declare const slowFirst: <F extends { readonly moduleId: string }>(
  hints: ReadonlyArray<string>,
  files: ReadonlyArray<F>
) => Array<F>
