import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { useAction } from '../hooks'
import { ErrorBox } from '../components/ui'
import { PageHeading } from '../components/heading'

// SignIn requests a magic link. On a deep link (deepLink) it stands in for the page asked
// for, which shows once the link has been opened.
export function SignIn({ deepLink = false }: { deepLink?: boolean }) {
  const [email, setEmail] = useState('')
  const [sentTo, setSentTo] = useState<string | null>(null)
  const { busy, error, run } = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    run(async () => {
      await ok(api().POST('/api/auth/magic-link', { body: { email } }))
      setSentTo(email)
    })
  }
  return (
    <main class="narrow" id="main">
      <PageHeading title={sentTo ? 'Check your mail' : 'Sign in'} class="brand-big">
        Tori
      </PageHeading>
      {sentTo ? (
        <section aria-live="polite">
          <h2>Check your mail</h2>
          <p>
            We sent a sign-in link to <strong>{sentTo}</strong>. It works once, for 15 minutes. Open it in this
            browser{deepLink ? ': this page then shows what you opened' : ''}.
          </p>
          <button type="button" class="secondary" onClick={() => setSentTo(null)}>
            Use another address
          </button>
        </section>
      ) : (
        <form onSubmit={submit} aria-labelledby="signin-heading">
          <h2 id="signin-heading">Sign in</h2>
          <p class="muted">
            {deepLink ? 'Sign in to continue to this page. ' : ''}We mail you a link; no password. A new address gets a new
            account.
          </p>
          <label for="email">Email address</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
          <ErrorBox error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Email me a sign-in link'}
          </button>
        </form>
      )}
    </main>
  )
}
