/** Types of `scripts/notices.mjs` for the notices test. */
export interface EmbeddedPackage {
  readonly name: string
  readonly version: string
  readonly license: string
  readonly dir: string
  readonly licenceFiles: ReadonlyArray<string>
  readonly noticeFiles: ReadonlyArray<string>
}
export interface Metafile {
  readonly inputs: Readonly<Record<string, unknown>>
}
export declare const packageDirOf: (file: string) => string | undefined
export declare const inputFiles: (metafile: Metafile, workingDir: string) => ReadonlyArray<string>
export declare const embeddedPackages: (metafile: Metafile, workingDir: string) => ReadonlyArray<EmbeddedPackage>
export declare const noticesText: (
  packages: ReadonlyArray<EmbeddedPackage>,
  options?: { readonly title?: string }
) => string
export declare const writeNotices: (
  metafile: Metafile,
  options: { readonly workingDir: string; readonly out: string; readonly title?: string }
) => ReadonlyArray<EmbeddedPackage>
