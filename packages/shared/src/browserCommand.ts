/**
 * The command that hands a URL to the platform's default browser (`authorizeLocal` on both lines).
 */

export const browserCommand = (
  platform: string,
  url: string
): { readonly command: string; readonly args: ReadonlyArray<string> } => {
  switch (platform) {
    case "darwin":
      return { command: "open", args: [url] }
    // Not `cmd /c start`: cmd would read the URL's `&` as a command separator and expand `%…%`. rundll32 passes the
    // URL to the default handler as is.
    case "win32":
      return { command: "rundll32", args: ["url.dll,FileProtocolHandler", url] }
    default:
      return { command: "xdg-open", args: [url] }
  }
}
