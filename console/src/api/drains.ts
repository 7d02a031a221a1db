// drainURLProblem says what is wrong with a drain's URL before it is sent (the API says the
// rest, a private address included), or null: https:// or syslog+tls:// with a host, as
// `tori drains add` checks. Pure, so scripts/metrics.test.mjs runs it in Node.
export function drainURLProblem(raw: string): string | null {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return 'Not a URL: want https://host/path or syslog+tls://host:port.'
  }
  if (u.protocol === 'http:' || u.protocol === 'syslog:') return 'Drains send over TLS only: use https:// or syslog+tls://.'
  if (u.protocol !== 'https:' && u.protocol !== 'syslog+tls:') return 'Want an https:// or syslog+tls:// URL.'
  if (!u.hostname) return 'The URL names no host.'
  return null
}
