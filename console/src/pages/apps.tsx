import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { slugInputPattern } from '../api/contract'
import { chosenTeam, teamQuery } from '../api/team'
import { useAction, useLoad } from '../hooks'
import { Link, navigate, useLocation } from '../router'
import { Badge, Empty, ErrorBox, Loading, Time } from '../components/ui'
import { PageHeading } from '../components/heading'

export function AppsList() {
  // The team switcher's choice: that team's apps (?team=), or every team's.
  const team = chosenTeam(useLocation())
  const apps = useLoad(() => ok(api().GET('/api/apps', { params: { query: teamQuery(team) } })), [team])
  return (
    <section>
      <div class="title-row">
        <PageHeading title={team ? `Apps · ${team}` : 'Apps'} />
      </div>
      <CreateApp team={team} />
      <ErrorBox error={apps.error} />
      {apps.loading && !apps.data && <Loading />}
      {apps.data && apps.data.length === 0 && (
        <Empty title="No apps yet">
          Create one above, then deploy a folder to it from its page (or run <code>tori deploy</code> in the folder).
        </Empty>
      )}
      {apps.data && apps.data.length > 0 && (
        <ul class="cards" aria-label="Your apps">
          {apps.data.map((a) => (
            <li key={a.id} class="card">
              <div class="card-head">
                <Link href={`/apps/${a.slug}`} class="card-title">
                  {a.name || a.slug}
                </Link>
                <Badge status={a.status} />
              </div>
              <p class="muted small">
                {a.kind}
                {a.framework !== a.kind && ` · ${a.framework}`} · {a.region}
                {!team && a.team && ` · team ${a.team}`} · created <Time at={a.createdAt} />
              </p>
              <a href={a.url} target="_blank" rel="noopener noreferrer" class="small">
                {a.url}
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

// CreateApp makes the app in the chosen team (the API's default, the personal team, when none is).
function CreateApp({ team }: { team: string }) {
  const [name, setName] = useState('')
  const [kind, setKind] = useState<'static' | 'service'>('static')
  const { busy, error, run } = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    run(async () => {
      const body: { name?: string; kind: 'static' | 'service'; team?: string } = { kind, ...teamQuery(team) }
      if (name.trim()) body.name = name.trim()
      const app = await ok(api().POST('/api/apps', { body }))
      navigate(`/apps/${app.slug}`)
    })
  }
  return (
    <form class="panel inline-form" onSubmit={submit} aria-label="Create an app">
      <div class="field">
        <label for="new-app-name">Name</label>
        <input
          id="new-app-name"
          placeholder="my-site (empty: a name is made up)"
          pattern={slugInputPattern}
          title="lowercase letters, digits and dashes"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="new-app-kind">Kind</label>
        <select id="new-app-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'static' | 'service')}>
          <option value="static">static site</option>
          <option value="service">service</option>
        </select>
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : team ? `Create app in ${team}` : 'Create app'}
      </button>
      <ErrorBox error={error} />
    </form>
  )
}
