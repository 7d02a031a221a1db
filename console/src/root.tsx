import { useEffect, useState } from 'preact/hooks'
import { loadSession, rememberReturn, type Session } from './api/session'
import { match, navigate, useLocation } from './router'
import { onNotice } from './notice'
import { Shell } from './components/shell'
import { SignIn } from './pages/signin'
import { Verify } from './pages/verify'
import { Device } from './pages/device'
import { CliAuthorize } from './pages/cliauthorize'
import { AppsList } from './pages/apps'
import { AppPage } from './pages/app'
import { AccountPage } from './pages/account'

export function Root() {
  const url = useLocation()
  const [session, setSession] = useState<Session | null>(loadSession)
  const [notice, setNoticeText] = useState<string | null>(null)
  useEffect(() => onNotice(setNoticeText), [])
  useEffect(() => {
    const update = () => setSession(loadSession())
    window.addEventListener('tori:session', update)
    window.addEventListener('storage', update)
    return () => {
      window.removeEventListener('tori:session', update)
      window.removeEventListener('storage', update)
    }
  }, [])
  const path = url.pathname.replace(/\/+$/, '') || '/'

  useEffect(() => {
    document.title = 'Tori console'
  }, [path])

  // The magic link works whether or not a session exists.
  if (path === '/auth/verify') return <Verify token={url.searchParams.get('token') ?? ''} />

  if (!session) {
    if (path !== '/') {
      rememberReturn(path + url.search)
      navigate('/', { replace: true })
      return null
    }
    return <SignIn />
  }

  let page
  let m: Record<string, string> | null
  if (path === '/' || path === '/apps') page = <AppsList />
  else if (path === '/account') page = <AccountPage />
  else if (path === '/device' || path === '/cli')
    page = <Device code={url.searchParams.get('user_code') ?? url.searchParams.get('code') ?? ''} />
  else if (path === '/cli/authorize') page = <CliAuthorize params={url.searchParams} />
  else if ((m = match('/apps/:slug', path)) || (m = match('/apps/:slug/:tab', path)))
    page = <AppPage slug={m.slug} tab={m.tab ?? 'overview'} />
  else
    page = (
      <section>
        <h1>Not found</h1>
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
