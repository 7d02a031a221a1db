import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { ApiError, messageOf } from '../api/errors'
import { rememberTeam } from '../api/team'
import { navigate } from '../router'
import { ErrorBox } from '../components/ui'
import { PageHeading } from '../components/heading'

// What each refusal of POST /api/invitations/accept means to the person holding the link.
const advice: Record<string, string> = {
  invitation_email_mismatch: 'This invitation was sent to another address: sign out and sign in as that address, then open the link again.',
  invitation_expired: 'This invitation has expired (they last 7 days): ask the team for a new one.',
  invalid_token: 'This invitation was already used or revoked: ask the team for a new one.',
}

// AcceptInvitation is /invitations/accept?token=…, the link an invitation mails. Signed out,
// the sign-in form shows here first and comes back. The code leaves the address bar at once;
// joining waits for the person's click, so opening the link alone joins nothing.
export function AcceptInvitation({ token }: { token: string }) {
  const code = useRef(token)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    history.replaceState(null, '', '/invitations/accept')
  }, [])
  const accept = async () => {
    setBusy(true)
    setError(null)
    try {
      const team = await ok(api().POST('/api/invitations/accept', { body: { token: code.current } }))
      rememberTeam(team.slug)
      navigate(`/apps?team=${encodeURIComponent(team.slug)}`, { replace: true })
    } catch (e) {
      setError(e instanceof ApiError && advice[e.code] ? `${advice[e.code]} (${e.code})` : messageOf(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="narrow">
      <PageHeading title="Join a team" />
      {code.current ? (
        <>
          <p>You have been invited to a team on Tori. Joining gives you its apps with the role the invitation names.</p>
          <button type="button" disabled={busy} onClick={accept}>
            {busy ? 'Joining…' : 'Accept invitation'}
          </button>
        </>
      ) : (
        <p>This link has no invitation code. Open the link from the mail again.</p>
      )}
      <ErrorBox error={error} />
    </section>
  )
}
