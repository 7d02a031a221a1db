import { useEffect, useState } from 'preact/hooks'
import { loadSession, rememberReturn, type Session } from './api/session'
import { match, useLocation } from './router'
import { onNotice } from './notice'
import { Shell } from './components/shell'
import { PageHeading } from './components/heading'
import { SignIn } from './pages/signin'
import { Verify } from './pages/verify'
import { Device } from './pages/device'
import { CliAuthorize } from './pages/cliauthorize'
import { AppsList } from './pages/apps'
import { AppPage } from './pages/app'
import { AccountPage } from './pages/account'
import { TeamsPage } from './pages/teams'
import { MembersPage } from './pages/members'
import { AuditPage } from './pages/audit'
import { AcceptInvitation } from './pages/invitation'

export function Root() {
  const url = useLocation()
  const [session, setSessionState] = useState<Session | null>(loadSession)
  const [notice, setNoticeText] = useState<string | null>(null)
  useEffect(() => onNotice(setNoticeText), [])
  useEffect(() => {
    const update = () => setSessionState(loadSession())
    window.addEventListener('tori:session', update)
    return () => window.removeEventListener('tori:session', update)
  }, [])
  const path = url.pathname.replace(/\/+$/, '') || '/'
  const signedOut = !session && path !== '/auth/verify'

  // Signed out, a deep link (a device code, the command line's authorize page, an app's tab)
  // shows the sign-in form where it is, and the console comes back to it after the magic link.
  useEffect(() => {
    if (signedOut && path !== '/') rememberReturn(path + url.search)
  }, [signedOut, path, url.search])

  // The magic link works whether or not a session exists.
  if (path === '/auth/verify') return <Verify token={url.searchParams.get('token') ?? ''} />
  if (!session) return <SignIn deepLink={path !== '/'} />

  let page
  let m: Record<string, string> | null
  if (path === '/' || path === '/apps') page = <AppsList />
  else if (path === '/account') page = <AccountPage />
  else if (path === '/device' || path === '/cli')
    page = <Device code={url.searchParams.get('user_code') ?? url.searchParams.get('code') ?? ''} />
  else if (path === '/cli/authorize') page = <CliAuthorize params={url.searchParams} />
  else if (path === '/invitations/accept') page = <AcceptInvitation token={url.searchParams.get('token') ?? ''} />
  else if (path === '/teams') page = <TeamsPage />
  else if ((m = match('/teams/:team/members', path))) page = <MembersPage team={m.team} />
  else if ((m = match('/teams/:team/audit', path))) page = <AuditPage team={m.team} />
  else if ((m = match('/apps/:slug', path)) || (m = match('/apps/:slug/:tab', path)))
    page = <AppPage slug={m.slug} tab={m.tab ?? 'overview'} />
  else
    page = (
      <section>
        <PageHeading title="Not found" />
        <p>
          Nothing lives at <code>{path}</code>. <a href="/apps">Back to your apps</a>.
        </p>
      </section>
    )
  return (
    <Shell session={session} notice={notice}>
      {page}
    </Shell>
  )
}
