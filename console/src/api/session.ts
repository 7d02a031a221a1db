// Who is signed in, as the console's own server tells it (GET /session). The API session
// token never reaches the page: the server keeps it and holds the browser to an HttpOnly
// cookie; the page knows the user, the expiry and the CSRF token it echoes on every
// state-changing call.
import type { Schemas } from './types'

const RETURN = 'tori.returnTo'
const CHANNEL = 'tori.session'

export type Session = { user: Schemas['User']; expiresAt: string; csrfToken: string }

let current: Session | null = null
// Other tabs of the console hear of a sign-in or sign-out and ask the server again.
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null

export function loadSession(): Session | null {
  return current
}

// setSession changes the page's session and tells this tab (and, when told to, the others).
export function setSession(s: Session | null, opts: { broadcast?: boolean } = {}) {
  current = s
  window.dispatchEvent(new Event('tori:session'))
  if (opts.broadcast) channel?.postMessage(s ? 'signed-in' : 'signed-out')
}

export function clearSession() {
  setSession(null)
}

// fetchSession asks the console's server who is signed in.
export async function fetchSession(): Promise<Session | null> {
  const res = await fetch('/session', { cache: 'no-store', credentials: 'same-origin' })
  if (res.status === 401) return null
  if (!res.ok) throw new Error(`the console's server answered ${res.status}`)
  return (await res.json()) as Session
}

export function onOtherTab(fn: () => void) {
  channel?.addEventListener('message', fn)
}

// Where to go once signed in: the page that asked for a session (a device approval, say). The
// magic link opens in another tab, so this lives in localStorage (a path, never a secret).
// Only paths of this origin.
export function rememberReturn(path: string) {
  if (path.startsWith('/') && !path.startsWith('//') && path !== '/') localStorage.setItem(RETURN, path)
}

export function takeReturn(): string {
  const p = localStorage.getItem(RETURN)
  localStorage.removeItem(RETURN)
  return p && p.startsWith('/') && !p.startsWith('//') ? p : '/apps'
}
