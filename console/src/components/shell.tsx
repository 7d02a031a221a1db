import type { ComponentChildren } from 'preact'
import type { Team } from '../api/types'
import { api, callHeaders, ok } from '../api/client'
import { setSession, type Session } from '../api/session'
import { chooseTeam, chosenTeam, teamQuery } from '../api/team'
import { useLoad } from '../hooks'
import { Link, match, navigate, useLocation } from '../router'
import { HoldBanner } from './hold'

export function Shell({ session, notice, children }: { session: Session; notice: string | null; children: ComponentChildren }) {
  const url = useLocation()
  const teams = useLoad(() => ok(api().GET('/api/teams')), [])
  const fromPath = match('/teams/:team/:page', url.pathname)?.team
  const team = fromPath ?? chosenTeam(url)
  // A team's own pages need one: the chosen team, else the personal one.
  const pageTeam = team || teams.data?.find((t) => t.personal)?.slug || ''
  // The hold banner is the shown team's (its owners see billing; others get no banner).
  const billing = useLoad(() => ok(api().GET('/api/billing', { params: { query: teamQuery(team) } })), [team])
  const signOut = async () => {
    // The console's server revokes the session at the API and clears the cookie; the page
    // forgets it whatever the answer.
    try {
      await fetch('/session/logout', { method: 'POST', credentials: 'same-origin', headers: callHeaders('POST') })
    } finally {
      setSession(null, { broadcast: true })
      navigate('/', { replace: true })
    }
  }
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/apps" class="brand">
          Tori
        </Link>
        <nav aria-label="Main">
          <Link href={team ? `/apps?team=${encodeURIComponent(team)}` : '/apps'}>Apps</Link>
          {pageTeam && <Link href={`/teams/${encodeURIComponent(pageTeam)}/members`}>Members</Link>}
          {pageTeam && <Link href={`/teams/${encodeURIComponent(pageTeam)}/audit`}>Audit log</Link>}
          <Link href="/account">Account</Link>
        </nav>
        <TeamSwitcher teams={teams.data} team={team} url={url} allowAll={!fromPath} />
        <span class="who" title={session.user.email}>
          {session.user.email}
        </span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {billing.data?.hold && <HoldBanner hold={billing.data.hold} />}
      <main id="main">{children}</main>
    </div>
  )
}

// TeamSwitcher picks the team the console shows; on a team's own page there is no "every team".
function TeamSwitcher({ teams, team, url, allowAll }: { teams: Team[] | null; team: string; url: URL; allowAll: boolean }) {
  if (!teams) return null
  return (
    <div class="team-switcher">
      <label for="team-switcher" class="visually-hidden">
        Team
      </label>
      <select id="team-switcher" value={team} onChange={(e) => chooseTeam(e.currentTarget.value, url)}>
        {allowAll && <option value="">All teams</option>}
        {teams.map((t) => (
          <option key={t.id} value={t.slug}>
            {t.personal ? `${t.name} (personal)` : t.name} · {t.role}
          </option>
        ))}
      </select>
      <Link href="/teams" class="small">
        Teams
      </Link>
    </div>
  )
}
