// The signed-in session, kept in localStorage so a reload or a second tab stays signed in.
import type { Schemas } from './types'

const KEY = 'tori.session'
const RETURN = 'tori.returnTo'

export type Session = Schemas['Session']

export function loadSession(): Session | null {
  try {
    const s = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session | null
    if (!s || !s.token || (s.expiresAt && Date.parse(s.expiresAt) < Date.now())) return null
    return s
  } catch {
    return null
  }
}

export function saveSession(s: Session) {
  localStorage.setItem(KEY, JSON.stringify(s))
}

export function clearSession() {
  localStorage.removeItem(KEY)
}

// Where to go once signed in: the page that asked for a session (a device approval, say). The
// magic link opens in another tab, so this lives in localStorage too. Only paths of this origin.
export function rememberReturn(path: string) {
  if (path.startsWith('/') && !path.startsWith('//') && path !== '/') localStorage.setItem(RETURN, path)
}

export function takeReturn(): string {
  const p = localStorage.getItem(RETURN)
  localStorage.removeItem(RETURN)
  return p && p.startsWith('/') && !p.startsWith('//') ? p : '/apps'
}
