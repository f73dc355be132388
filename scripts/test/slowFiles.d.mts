/** Types of `scripts/test/slowFiles.mjs`: the test files that run outside the process, and who takes them. */
export declare const slowFiles: ReadonlyArray<string>
export declare const unitProjects: ReadonlyArray<string>
export declare const slowFilesInclude: Array<string>
export declare const slowFilesOnly: boolean
