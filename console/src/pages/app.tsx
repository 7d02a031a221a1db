import { api, ok } from '../api/client'
import { useInterval, useLoad } from '../hooks'
import { Link } from '../router'
import { Badge, ErrorBox, Loading } from '../components/ui'
import { Overview } from './app/overview'
import { Logs } from './app/logs'
import { Env } from './app/env'
import { Domains } from './app/domains'
import { DatabaseTab } from './app/database'
import { Processes } from './app/processes'
import { Settings } from './app/settings'
import { Previews } from './app/previews'
import { Drains } from './app/drains'
import { MetricsTab } from './app/metrics'
import { PageHeading } from '../components/heading'

const tabs = [
  ['overview', 'Deploys'],
  ['previews', 'Previews'],
  ['processes', 'Processes'],
  ['logs', 'Logs'],
  ['metrics', 'Metrics'],
  ['env', 'Environment'],
  ['domains', 'Domains'],
  ['database', 'Database'],
  ['settings', 'Settings'],
] as const

export function AppPage({ slug, tab }: { slug: string; tab: string }) {
  const app = useLoad(() => ok(api().GET('/api/apps/{slug}', { params: { path: { slug } } })), [slug])
  // While a deploy is under way the app's status and current deploy change by themselves.
  useInterval(app.reload, 2000, app.data?.status === 'deploying')
  // The caller's role in the app's team decides which buttons show (the API decides what is
  // allowed): a viewer sees previews without buttons, only admins see drains.
  const team = useLoad(async () => (app.data?.team ? ok(api().GET('/api/teams/{team}', { params: { path: { team: app.data.team } } })) : null), [app.data?.team])
  if (app.error && !app.data) {
    return (
      <section>
        <PageHeading title={slug} />
        <ErrorBox error={app.error} />
        <Link href="/apps">Back to your apps</Link>
      </section>
    )
  }
  if (!app.data) return <Loading />
  const a = app.data
  const role = team.data?.role
  const canDeploy = role !== undefined && role !== 'viewer'
  const isAdmin = role === 'admin' || role === 'owner'
  const tabLabel = tabs.find(([id]) => id === tab)?.[1] ?? 'Not found'
  return (
    <section>
      <p class="crumbs">
        <Link href="/apps">Apps</Link> /
      </p>
      <div class="title-row">
        <PageHeading title={`${tabLabel} · ${a.name || a.slug}`}>{a.name || a.slug}</PageHeading>
        <Badge status={a.status} />
      </div>
      <p class="app-meta">
        <a href={a.url} target="_blank" rel="noopener noreferrer" data-testid="app-url">
          {a.url}
        </a>
        <span class="muted">
          {' '}
          · {a.kind}
          {a.framework !== a.kind && ` · ${a.framework}`} · {a.region} ({a.zone})
        </span>
      </p>
      <nav class="tabs" aria-label="App">
        {tabs.map(([id, label]) => (
          <Link key={id} href={id === 'overview' ? `/apps/${slug}` : `/apps/${slug}/${id}`} aria-current={tab === id ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {tab === 'overview' && <Overview app={a} onChange={app.reload} />}
      {tab === 'processes' && <Processes slug={slug} kind={a.kind} />}
      {tab === 'previews' && <Previews slug={slug} canDeploy={canDeploy} />}
      {tab === 'logs' && (
        <div class="stack">
          <Logs slug={slug} />
          {isAdmin && <Drains slug={slug} />}
        </div>
      )}
      {tab === 'metrics' && <MetricsTab slug={slug} kind={a.kind} />}
      {tab === 'env' && <Env slug={slug} kind={a.kind} />}
      {tab === 'domains' && <Domains slug={slug} kind={a.kind} />}
      {tab === 'database' && <DatabaseTab slug={slug} kind={a.kind} />}
      {tab === 'settings' && <Settings slug={slug} />}
    </section>
  )
}
