import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { loadSession } from '../api/session'
import { useAction } from '../hooks'
import { ErrorBox } from '../components/ui'
import { PageHeading } from '../components/heading'

// Device sign-in: the command line shows a code and polls; approving here lets it in.
export function Device({ code }: { code: string }) {
  const [userCode, setUserCode] = useState(code.toUpperCase())
  const [done, setDone] = useState<'approved' | 'denied' | null>(null)
  const { busy, error, run } = useAction()
  const email = loadSession()?.user.email
  const decide = (approve: boolean) =>
    run(async () => {
      const body = { userCode: userCode.trim().toUpperCase() }
      await ok(approve ? api().POST('/api/auth/cli/approve', { body }) : api().POST('/api/auth/cli/deny', { body }))
      setDone(approve ? 'approved' : 'denied')
    })
  if (done) {
    return (
      <section class="narrow-card" aria-live="polite">
        <PageHeading title={done === 'approved' ? 'Command line signed in' : 'Sign-in denied'} />
        <p>
          {done === 'approved'
            ? 'You can close this page and go back to your terminal.'
            : 'The command line was refused. Nothing was signed in.'}
        </p>
      </section>
    )
  }
  return (
    <section class="narrow-card">
      <PageHeading title="Sign in the command line" />
      <p>
        A command line is asking to act as <strong>{email}</strong>. Approve only if the code below is the one your
        terminal shows.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          decide(true)
        }}
      >
        <label for="user-code">Code</label>
        <input
          id="user-code"
          class="code-input"
          required
          autocomplete="off"
          spellcheck={false}
          placeholder="WXYZ-2345"
          value={userCode}
          onInput={(e) => setUserCode(e.currentTarget.value)}
        />
        <ErrorBox error={error} />
        <div class="row">
          <button type="submit" disabled={busy}>
            Approve
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => decide(false)}>
            Deny
          </button>
        </div>
      </form>
    </section>
  )
}
