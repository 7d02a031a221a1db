import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, messageOf, retryAfterOf } from '../api/errors'
import { callHeaders } from '../api/client'
import { setSession, takeReturn, type Session } from '../api/session'
import { navigate } from '../router'
import { ErrorBox } from '../components/ui'
import { PageHeading } from '../components/heading'

// verifyLink hands the mail's code to the console's server, which exchanges it at the API and
// keeps the session; the page gets the cookie and its CSRF token, never the session token.
async function verifyLink(token: string): Promise<Session> {
  const res = await fetch('/session/verify', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', ...callHeaders('POST') },
    body: JSON.stringify({ token }),
  })
  const body = await res.json().catch(() => undefined)
  if (!res.ok) throw new ApiError(res.status, body, retryAfterOf(res, body))
  return body as Session
}

export function Verify({ token }: { token: string }) {
  const [error, setError] = useState<string | null>(null)
  const tried = useRef(false)
  useEffect(() => {
    // The code is single-use: exchange it exactly once, however often this renders.
    if (tried.current) return
    tried.current = true
    // The code leaves the address bar (and the history) before anything else happens.
    history.replaceState(null, '', '/auth/verify')
    if (!token) {
      setError('This link has no code. Request a new one.')
      return
    }
    verifyLink(token).then(
      (s) => {
        setSession(s, { broadcast: true })
        navigate(takeReturn(), { replace: true })
      },
      (e) => setError(messageOf(e)),
    )
  }, [token])
  return (
    <main class="narrow" id="main">
      <PageHeading title={error ? 'Sign-in failed' : 'Signing in'} class="brand-big">
        Tori
      </PageHeading>
      {error ? (
        <section>
          <h2>This link did not sign you in</h2>
          <ErrorBox error={error} />
          <p>A link works once, for 15 minutes.</p>
          <a class="button" href="/">
            Request a new link
          </a>
        </section>
      ) : (
        <p aria-live="polite">Signing you in…</p>
      )}
    </main>
  )
}
