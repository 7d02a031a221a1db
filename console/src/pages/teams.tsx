import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { slugInputPattern } from '../api/contract'
import { chooseTeam, chosenTeam } from '../api/team'
import { useAction, useLoad } from '../hooks'
import { Link, useLocation } from '../router'
import { useConfirm } from '../components/confirm'
import { ErrorBox, Loading, Time } from '../components/ui'
import { PageHeading } from '../components/heading'

// TeamsPage lists the caller's teams with their role in each, and creates a team (the caller
// becomes its owner; it starts on nestling).
export function TeamsPage() {
  const url = useLocation()
  const teams = useLoad(() => ok(api().GET('/api/teams')), [])
  const [name, setName] = useState('')
  const [slug, setSlug] = useState('')
  const create = useAction()
  const remove = useAction()
  const [confirm, dialog] = useConfirm()
  const submit = (e: Event) => {
    e.preventDefault()
    create.run(async () => {
      const t = await ok(api().POST('/api/teams', { body: { name: name.trim(), ...(slug.trim() ? { slug: slug.trim() } : {}) } }))
      setName('')
      setSlug('')
      teams.reload()
      chooseTeam(t.slug, new URL(`/teams/${t.slug}/members`, location.origin))
    })
  }
  const del = async (slug: string) => {
    const yes = await confirm({
      title: `Delete ${slug}?`,
      body: <p>A team that still owns apps cannot be deleted: delete or move them first.</p>,
      action: 'Delete team',
    })
    if (!yes) return
    remove.run(async () => {
      await ok(api().DELETE('/api/teams/{team}', { params: { path: { team: slug } } }))
      if (chosenTeam(url) === slug) chooseTeam('', url)
      teams.reload()
    })
  }
  return (
    <section class="stack">
      <PageHeading title="Teams" />
      <form class="panel inline-form" onSubmit={submit} aria-label="Create a team">
        <div class="field grow">
          <label for="team-name">Name</label>
          <input id="team-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="team-slug">Slug</label>
          <input
            id="team-slug"
            placeholder="made from the name"
            pattern={slugInputPattern}
            title="lowercase letters, digits and dashes"
            value={slug}
            onInput={(e) => setSlug(e.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create team'}
        </button>
        <ErrorBox error={create.error} />
      </form>
      <ErrorBox error={teams.error ?? remove.error} />
      {teams.loading && !teams.data && <Loading />}
      {teams.data && (
        <table class="table" aria-label="Your teams">
          <thead>
            <tr>
              <th>Team</th>
              <th>Your role</th>
              <th>Plan</th>
              <th class="hide-narrow">Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {teams.data.map((t) => (
              <tr key={t.id} data-team={t.slug}>
                <td>
                  <Link href={`/apps?team=${encodeURIComponent(t.slug)}`}>{t.name}</Link>
                  <div class="muted small">
                    {t.slug}
                    {t.personal && ' · personal'}
                  </div>
                </td>
                <td>{t.role}</td>
                <td>{t.plan}</td>
                <td class="hide-narrow">
                  <Time at={t.createdAt} />
                </td>
                <td class="actions">
                  <Link href={`/teams/${encodeURIComponent(t.slug)}/members`}>Members</Link>
                  {t.role === 'owner' && !t.personal && (
                    <button type="button" class="secondary" disabled={remove.busy} aria-label={`Delete ${t.slug}`} onClick={() => del(t.slug)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {dialog}
    </section>
  )
}
