/** Bundles `./<name>.mjs` of this folder (from the packages' sources) into one file; returns its path. */
export declare const bundle: (name: string) => string
