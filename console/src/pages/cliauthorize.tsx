import { api, ok } from '../api/client'
import { loadSession } from '../api/session'
import { useAction } from '../hooks'
import { ErrorBox } from '../components/ui'
import { PageHeading } from '../components/heading'

// The loopback flow: the command line listens on 127.0.0.1 and opened this page with its
// redirect, state and PKCE challenge. Authorizing sends the browser back to it with a code.
// Both spellings of the parameters are read: the command line's camelCase and OAuth's.
export function CliAuthorize({ params }: { params: URLSearchParams }) {
  const get = (camel: string, snake: string) => params.get(camel) ?? params.get(snake) ?? ''
  const redirectUri = get('redirectUri', 'redirect_uri')
  const state = get('state', 'state')
  const codeChallenge = get('codeChallenge', 'code_challenge')
  const codeChallengeMethod = get('codeChallengeMethod', 'code_challenge_method') || 'S256'
  const { busy, error, run } = useAction()
  let target = ''
  try {
    target = new URL(redirectUri).host
  } catch {
    target = ''
  }
  const authorize = () =>
    run(async () => {
      const r = await ok(
        api().POST('/api/auth/cli/authorize', {
          body: { redirectUri, state, codeChallenge, codeChallengeMethod: codeChallengeMethod as 'S256' },
        }),
      )
      window.location.assign(r.redirectTo)
    })
  if (!redirectUri || !state || !codeChallenge) {
    return (
      <section class="narrow-card">
        <PageHeading title="Incomplete request" />
        <p>This page needs the link the command line opened (it carries a redirect, a state and a challenge). Run <code>tori login --web</code> again.</p>
      </section>
    )
  }
  return (
    <section class="narrow-card">
      <PageHeading title="Authorize the command line" />
      <p>
        The command line on this computer (<code>{target || redirectUri}</code>) asks to act as{' '}
        <strong>{loadSession()?.user.email}</strong>.
      </p>
      <ErrorBox error={error} />
      <button type="button" onClick={authorize} disabled={busy}>
        {busy ? 'Authorizing…' : 'Authorize'}
      </button>
    </section>
  )
}
