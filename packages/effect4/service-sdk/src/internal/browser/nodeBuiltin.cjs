// What a Node-only module is in a browser page (package.json "browser" field): nothing. Only the file caches, the
// directory store and the loopback sign-in use them, and a page has none of those (docs/browser.md).
module.exports = {}
