import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { messageOf } from '../api/errors'
import { saveSession, takeReturn } from '../api/session'
import { navigate } from '../router'
import { ErrorBox } from '../components/ui'

export function Verify({ token }: { token: string }) {
  const [error, setError] = useState<string | null>(null)
  const tried = useRef(false)
  useEffect(() => {
    // The code is single-use: exchange it exactly once, however often this renders.
    if (tried.current) return
    tried.current = true
    if (!token) {
      setError('This link has no code. Request a new one.')
      return
    }
    ok(api().POST('/api/auth/magic-link/verify', { body: { token } })).then(
      (s) => {
        saveSession(s)
        window.dispatchEvent(new Event('tori:session'))
        navigate(takeReturn(), { replace: true })
      },
      (e) => setError(messageOf(e)),
    )
  }, [token])
  return (
    <main class="narrow" id="main">
      <h1 class="brand-big">Tori</h1>
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
