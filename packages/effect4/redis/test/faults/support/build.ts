/**
 * vitest globalSetup of the Effect 4 line's fault tests: their workers run on the built packages of both lines.
 */
import { build } from "../../../../../redis/test/faults/support/build.js"

export default function setup(): void {
  build(["packages/redis/tsconfig.src.json", "packages/effect4/redis/tsconfig.src.json"])
}
