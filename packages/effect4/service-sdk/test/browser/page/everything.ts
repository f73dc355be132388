// Every public name of the browser entry, so that the bundle holds all of it (test/browser/bundle.test.ts).
export * from "@service-sdk/effect"
