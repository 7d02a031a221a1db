import type { ComponentChildren } from 'preact'
import { api, callHeaders, ok } from '../api/client'
import { setSession, type Session } from '../api/session'
import { useLoad } from '../hooks'
import { Link, navigate } from '../router'
import { HoldBanner } from './hold'

export function Shell({ session, notice, children }: { session: Session; notice: string | null; children: ComponentChildren }) {
  const billing = useLoad(() => ok(api().GET('/api/billing')), [])
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
          <Link href="/apps">Apps</Link>
          <Link href="/account">Account</Link>
        </nav>
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
