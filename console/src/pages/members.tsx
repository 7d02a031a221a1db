import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { roles, type Role } from '../api/types'
import { useAction, useLoad } from '../hooks'
import { useConfirm } from '../components/confirm'
import { Empty, ErrorBox, Loading, Time } from '../components/ui'
import { PageHeading } from '../components/heading'

// MembersPage is a team's members (change role, remove, leave) and its invitations (invite
// with a role, revoke a pending one). What a viewer may not do the API refuses with the role
// it needs, shown in its words.
export function MembersPage({ team }: { team: string }) {
  const path = { params: { path: { team } } }
  const info = useLoad(() => ok(api().GET('/api/teams/{team}', path)), [team])
  const members = useLoad(() => ok(api().GET('/api/teams/{team}/members', path)), [team])
  const me = useLoad(() => ok(api().GET('/api/account')), [])
  const change = useAction()
  const [confirm, dialog] = useConfirm()
  const myRole = info.data?.role
  const canManage = myRole === 'admin' || myRole === 'owner'

  const setRole = (userId: string, role: Role) =>
    change.run(async () => {
      await ok(api().PATCH('/api/teams/{team}/members/{userId}', { params: { path: { team, userId } }, body: { role } }))
      members.reload()
    })
  const remove = async (userId: string, email: string, self: boolean) => {
    const yes = await confirm({
      title: self ? `Leave ${team}?` : `Remove ${email}?`,
      body: self ? (
        <p>You lose access to the team's apps, and your tokens for the team stop working at once.</p>
      ) : (
        <p>
          {email} loses access to <strong>{team}</strong>, and their tokens for it stop working at once.
        </p>
      ),
      action: self ? 'Leave team' : 'Remove member',
    })
    if (!yes) return
    change.run(async () => {
      await ok(api().DELETE('/api/teams/{team}/members/{userId}', { params: { path: { team, userId } } }))
      members.reload()
    })
  }

  return (
    <section class="stack">
      <PageHeading title={`Members · ${info.data?.name ?? team}`} />
      {info.data?.personal && (
        <p class="muted">
          This is your personal team: it cannot be shared. <a href="/teams">Create a team</a> to work with others.
        </p>
      )}
      <div class="panel">
        <h2>Members</h2>
        <ErrorBox error={info.error ?? members.error ?? change.error} />
        {members.loading && !members.data && <Loading />}
        {members.data && (
          <table class="table" aria-label="Members">
            <thead>
              <tr>
                <th>Member</th>
                <th>Role</th>
                <th class="hide-narrow">Joined</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {members.data.map((m) => {
                const self = m.userId === me.data?.user.id
                return (
                  <tr key={m.userId} data-member={m.email}>
                    <td>
                      {m.name || m.email}
                      {m.name && <div class="muted small">{m.email}</div>}
                      {self && <span class="muted small"> (you)</span>}
                    </td>
                    <td>
                      {canManage && !self ? (
                        <select
                          aria-label={`Role of ${m.email}`}
                          value={m.role}
                          disabled={change.busy}
                          onChange={(e) => setRole(m.userId, e.currentTarget.value as Role)}
                        >
                          {roles.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      ) : (
                        m.role
                      )}
                    </td>
                    <td class="hide-narrow">
                      <Time at={m.joinedAt} />
                    </td>
                    <td class="actions">
                      {(canManage || self) && !info.data?.personal && (
                        <button
                          type="button"
                          class="secondary"
                          disabled={change.busy}
                          aria-label={self ? `Leave ${team}` : `Remove ${m.email}`}
                          onClick={() => remove(m.userId, m.email, self)}
                        >
                          {self ? 'Leave' : 'Remove'}
                        </button>
                      )}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        )}
      </div>
      {canManage && !info.data?.personal && <Invitations team={team} />}
      {dialog}
    </section>
  )
}

function Invitations({ team }: { team: string }) {
  const path = { params: { path: { team } } }
  const invitations = useLoad(() => ok(api().GET('/api/teams/{team}/invitations', path)), [team])
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('developer')
  const [sent, setSent] = useState<string | null>(null)
  const invite = useAction()
  const revoke = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    invite.run(async () => {
      const inv = await ok(api().POST('/api/teams/{team}/invitations', { ...path, body: { email: email.trim(), role } }))
      setSent(`Invited ${inv.email} as ${inv.role}: the link in their mail works once, until ${new Date(inv.expiresAt).toLocaleString()}.`)
      setEmail('')
      invitations.reload()
    })
  }
  return (
    <div class="panel" id="invitations">
      <h2>Invitations</h2>
      <form class="inline-form" onSubmit={submit} aria-label="Invite someone">
        <div class="field grow">
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={invite.busy}>
          {invite.busy ? 'Inviting…' : 'Invite'}
        </button>
        <ErrorBox error={invite.error} />
      </form>
      {sent && (
        <p role="status" class="muted small">
          {sent}
        </p>
      )}
      <ErrorBox error={invitations.error ?? revoke.error} />
      {invitations.data && invitations.data.length === 0 && <Empty title="No pending invitations" />}
      {invitations.data && invitations.data.length > 0 && (
        <table class="table" aria-label="Pending invitations">
          <thead>
            <tr>
              <th>Email</th>
              <th>Role</th>
              <th class="hide-narrow">Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {invitations.data.map((i) => (
              <tr key={i.id} data-invitation={i.email}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td class="hide-narrow">
                  <Time at={i.expiresAt} />
                </td>
                <td class="actions">
                  <button
                    type="button"
                    class="secondary"
                    disabled={revoke.busy}
                    aria-label={`Revoke the invitation of ${i.email}`}
                    onClick={() =>
                      revoke.run(async () => {
                        await ok(api().DELETE('/api/teams/{team}/invitations/{id}', { params: { path: { team, id: i.id } } }))
                        invitations.reload()
                      })
                    }
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
