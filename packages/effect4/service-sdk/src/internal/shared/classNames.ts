// Copied from packages/shared/src/classNames.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * Class names that survive a minifier (an app's bundler, the `@service-sdk/promise` bundle), for both lines' errors:
 * the names come from the object's keys, which no minifier renames, not from `Class.name`, which it does.
 */

/**
 * Names each class after its key (`Class.name`, so `constructor.name`); for the error classes also the prototype's
 * `name` (not enumerable), which `error.name` and the stack's first line read.
 */
export const nameClasses = (
  classes: Readonly<Record<string, object>>,
  errorClasses: Readonly<Record<string, { readonly prototype: object }>>
): void => {
  for (const [name, Class] of Object.entries({ ...classes, ...errorClasses })) {
    Object.defineProperty(Class, "name", { value: name, configurable: true })
  }
  for (const [name, ErrorClass] of Object.entries(errorClasses)) {
    Object.defineProperty(ErrorClass.prototype, "name", {
      value: name,
      enumerable: false,
      configurable: true,
      writable: true
    })
  }
}
