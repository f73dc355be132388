/** Types of `scripts/pack.mjs` for the consumer tests. */
export interface PublishablePackage {
  readonly dir: string
  readonly name: string
  readonly version: string
  readonly peerDependencies: Readonly<Record<string, string>>
}
export interface Packed {
  /** npm name → absolute path of its tarball, dependencies first */
  readonly tarballs: Readonly<Record<string, string>>
  /** the peers a user installs beside the tarballs (npm name → range) */
  readonly peers: Readonly<Record<string, string>>
  /** `npm install <tarball> ...`, every tarball, as `npm run pack` prints it */
  readonly install: string
}
/** Both lines: the Effect 3 line's fields, and the Effect 4 line's under `effect4` (packed into `<out>/effect4`). */
export interface PackedBoth extends Packed {
  readonly effect4: Packed
}
/** The publishable workspace packages of a project (the root's by default; `packages/effect4` for the Effect 4 line). */
export declare const publishablePackages: (project?: string) => ReadonlyArray<PublishablePackage>
export declare const pack: (options?: { readonly out?: string; readonly log?: (line: string) => void }) => PackedBoth
