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
export declare const publishablePackages: () => ReadonlyArray<PublishablePackage>
export declare const pack: (options?: { readonly out?: string; readonly log?: (line: string) => void }) => Packed
