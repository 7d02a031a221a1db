// The team the console shows: `?team=<slug>` in the address, so a link opens the same view,
// else the last one chosen in this browser (a slug, never a secret), else none (the apps of
// every team; a team's own pages then use the personal team).
import { navigate } from '../router'

const KEY = 'tori.team'

export function chosenTeam(url: URL): string {
  return url.searchParams.get('team') ?? localStorage.getItem(KEY) ?? ''
}

// rememberTeam makes slug the team shown when the address names none.
export function rememberTeam(slug: string) {
  if (slug) localStorage.setItem(KEY, slug)
  else localStorage.removeItem(KEY)
}

// chooseTeam remembers slug ('' for every team) and shows the same page for it: a team's
// own page (/teams/<slug>/…) moves to the other team's, anything else gets ?team=.
export function chooseTeam(slug: string, url: URL) {
  rememberTeam(slug)
  const m = url.pathname.match(/^\/teams\/[^/]+(\/.*)?$/)
  if (m && slug) {
    navigate(`/teams/${encodeURIComponent(slug)}${m[1] ?? ''}`)
    return
  }
  const next = new URL(url.href)
  if (slug) next.searchParams.set('team', slug)
  else next.searchParams.delete('team')
  navigate(next.pathname + next.search)
}

// teamQuery is the `team` query parameter of a list or billing call: nothing for every team.
export function teamQuery(slug: string): { team?: string } {
  return slug ? { team: slug } : {}
}
