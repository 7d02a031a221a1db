import { useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { scopes, type Schemas, type TokenRequest } from '../api/types'
import { chosenTeam, teamQuery } from '../api/team'
import { useAction, useLoad } from '../hooks'
import { useLocation } from '../router'
import { bytes, CopyButton, Empty, ErrorBox, Loading, Time } from '../components/ui'
import { PageHeading } from '../components/heading'

export function AccountPage() {
  return (
    <section class="stack">
      <PageHeading title="Account" />
      <Region />
      <Tokens />
      <Billing />
    </section>
  )
}

function Region() {
  const account = useLoad(() => ok(api().GET('/api/account')), [])
  const { busy, error, run } = useAction()
  const [saved, setSaved] = useState(false)
  const change = (region: 'eu' | 'us') =>
    run(async () => {
      await ok(api().PATCH('/api/account', { body: { defaultRegion: region } }))
      setSaved(true)
      account.reload()
    })
  return (
    <div class="panel">
      <h2>Profile</h2>
      <ErrorBox error={account.error ?? error} />
      {account.data && (
        <>
          <p>
            {account.data.user.email} · plan <strong>{account.data.plan}</strong>
          </p>
          <label for="region">Default region for new apps</label>
          <div class="row">
            <select id="region" value={account.data.defaultRegion} disabled={busy} onChange={(e) => change(e.currentTarget.value as 'eu' | 'us')}>
              <option value="eu">eu — Europe</option>
              <option value="us">us — United States</option>
            </select>
            {saved && <span role="status" class="muted small">Saved.</span>}
          </div>
        </>
      )}
    </div>
  )
}

// The expiries offered for a scoped token (the API's default is 90 days, its most 365).
const expiries: [string, number][] = [
  ['1 day', 86400],
  ['7 days', 7 * 86400],
  ['30 days', 30 * 86400],
  ['90 days', 90 * 86400],
  ['365 days', 365 * 86400],
]

function Tokens() {
  const tokens = useLoad(() => ok(api().GET('/api/tokens')), [])
  const teams = useLoad(() => ok(api().GET('/api/teams')), [])
  const [name, setName] = useState('')
  // scope '' is a full token: it acts as you in every team, made by a session only.
  const [scope, setScope] = useState<'' | (typeof scopes)[number]>('')
  const [team, setTeam] = useState('')
  const [apps, setApps] = useState('')
  const [expiresIn, setExpiresIn] = useState(90 * 86400)
  const [created, setCreated] = useState<Schemas['CreatedApiToken'] | null>(null)
  const create = useAction()
  const revoke = useAction()
  const teamSlug = team || teams.data?.find((t) => t.personal)?.slug || ''
  const submit = (e: Event) => {
    e.preventDefault()
    create.run(async () => {
      let body: TokenRequest = { name: name.trim() }
      if (scope) {
        const pinned = apps
          .split(/[\s,]+/)
          .map((a) => a.trim())
          .filter(Boolean)
        body = { ...body, team: teamSlug, scopes: [scope], expiresIn, ...(pinned.length ? { apps: pinned } : {}) }
      }
      const t = await ok(api().POST('/api/tokens', { body }))
      setCreated(t)
      setName('')
      setApps('')
      tokens.reload()
    })
  }
  return (
    <div class="panel" id="tokens">
      <h2>API tokens</h2>
      <p class="muted small">
        For CI and scripts: send it as <code>Authorization: Bearer …</code> or set <code>TORI_TOKEN</code>. A full token acts as you in
        every team; a scoped one acts in one team, at most with its scope (read, deploy, write, admin) and your role there, optionally
        pinned to some apps, and expires.
      </p>
      {created && (
        <div class="secret" role="status" data-testid="new-token">
          <p>
            <strong>{created.name}</strong>: copy the secret now. It is shown this once and never again.
          </p>
          <div class="row">
            <code class="wrap" data-testid="token-secret">
              {created.token}
            </code>
            <CopyButton text={created.token} />
          </div>
          <button type="button" class="link" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form class="inline-form" onSubmit={submit} aria-label="Create a token">
        <div class="field grow">
          <label for="token-name">Name</label>
          <input id="token-name" required placeholder="github-actions" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="token-scope">Scope</label>
          <select id="token-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as typeof scope)}>
            <option value="">full (everything you may do)</option>
            {scopes.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        {scope && (
          <>
            <div class="field">
              <label for="token-team">Team</label>
              <select id="token-team" value={teamSlug} onChange={(e) => setTeam(e.currentTarget.value)}>
                {teams.data?.map((t) => (
                  <option key={t.id} value={t.slug}>
                    {t.name}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="token-apps">Apps</label>
              <input id="token-apps" placeholder="every app (or: web, api)" value={apps} onInput={(e) => setApps(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="token-expiry">Expires in</label>
              <select id="token-expiry" value={expiresIn} onChange={(e) => setExpiresIn(Number(e.currentTarget.value))}>
                {expiries.map(([label, secs]) => (
                  <option key={secs} value={secs}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
          </>
        )}
        <button type="submit" disabled={create.busy}>
          Create token
        </button>
        <ErrorBox error={create.error} />
      </form>
      <ErrorBox error={tokens.error ?? revoke.error} />
      {tokens.loading && !tokens.data && <Loading />}
      {tokens.data && tokens.data.length === 0 && <Empty title="No API tokens">Create one above for CI or scripts.</Empty>}
      {tokens.data && tokens.data.length > 0 && (
        <table class="table" aria-label="Tokens">
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Scope</th>
              <th class="hide-narrow">Expires</th>
              <th class="hide-narrow">Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((t) => (
              <tr key={t.id} data-token={t.id}>
                <td>{t.name}</td>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>
                  {t.scopes?.length ? t.scopes.join(', ') : 'full'}
                  <div class="muted small">
                    {t.team ?? 'every team'}
                    {t.apps?.length ? ` · ${t.apps.join(', ')}` : ''}
                  </div>
                </td>
                <td class="hide-narrow">{t.expiresAt ? <Time at={t.expiresAt} /> : <span class="muted">never</span>}</td>
                <td class="hide-narrow">{t.lastUsedAt ? <Time at={t.lastUsedAt} /> : <span class="muted">never</span>}</td>
                <td class="actions">
                  <button
                    type="button"
                    class="secondary"
                    disabled={revoke.busy}
                    aria-label={`Revoke ${t.name}`}
                    onClick={() =>
                      revoke.run(async () => {
                        await ok(api().DELETE('/api/tokens/{id}', { params: { path: { id: t.id } } }))
                        tokens.reload()
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

const euro = (n: number) => new Intl.NumberFormat(undefined, { style: 'currency', currency: 'EUR' }).format(n)

function Billing() {
  const plans = useLoad(() => ok(api().GET('/api/plans')), [])
  // The chosen team's billing (its owners'); the personal team's when none is chosen.
  const team = chosenTeam(useLocation())
  const query = { params: { query: teamQuery(team) } }
  const billing = useLoad(() => ok(api().GET('/api/billing', query)), [team])
  const act = useAction()
  const [interval, setInterval] = useState<'month' | 'year'>('month')
  const go = (p: Promise<{ url: string }>) =>
    act.run(async () => {
      const { url } = await p
      window.location.assign(url)
    })
  const b = billing.data
  return (
    <div class="panel" id="billing">
      <h2>Plan and billing{team && ` · ${team}`}</h2>
      <ErrorBox error={plans.error ?? billing.error ?? act.error} />
      {(plans.loading || billing.loading) && !plans.data && <Loading />}
      {b && (
        <p>
          You are on <strong>{b.plan}</strong>
          {b.subscription && (
            <>
              {' '}
              ({b.subscription.interval}ly, {b.subscription.status}
              {b.subscription.cancelAtPeriodEnd ? ', ends' : ', renews'} <Time at={b.subscription.currentPeriodEnd} />)
            </>
          )}
          .{' '}
          {!b.configured && <span class="muted">Paid plans are not open for sign-up here yet.</span>}
        </p>
      )}
      {b?.configured && (
        <div class="row">
          <label for="interval">Billed</label>
          <select id="interval" value={interval} onChange={(e) => setInterval(e.currentTarget.value as 'month' | 'year')}>
            <option value="month">monthly</option>
            <option value="year">yearly</option>
          </select>
          {b.subscription && (
            <button type="button" class="secondary" disabled={act.busy} onClick={() => go(ok(api().POST('/api/billing/portal', query)))}>
              Manage subscription
            </button>
          )}
        </div>
      )}
      {plans.data && (
        <div class="plans">
          {plans.data.plans.map((p) => (
            <div key={p.name} class={`plan ${b?.plan === p.name ? 'plan-current' : ''}`}>
              <h3>{p.name}</h3>
              <p class="price">
                {p.prices.month === 0 ? 'free' : `${euro(p.prices.month)}/month`}
                {p.prices.year > 0 && <span class="muted small"> or {euro(p.prices.year)}/year</span>}
              </p>
              <ul class="small">
                <li>{p.limits.apps} apps</li>
                <li>{p.limits.customDomains} custom domains</li>
                <li>{bytes(p.limits.uploadBytes)} uploads</li>
                <li>{p.limits.cpu} CPU</li>
                <li>{p.limits.logRetentionDays} days of logs</li>
              </ul>
              {b?.configured && !b.subscription && p.prices.month > 0 && (
                <button type="button" disabled={act.busy} onClick={() => go(ok(api().POST('/api/billing/checkout', { ...query, body: { plan: p.name as 'songbird' | 'flock', interval } })))}>
                  Choose {p.name}
                </button>
              )}
              {b?.plan === p.name && <span class="tag">current</span>}
            </div>
          ))}
        </div>
      )}
      {plans.data && (
        <p class="muted small">
          Prices in {plans.data.billing.currency}
          {plans.data.billing.taxInclusive ? ', VAT included' : ''}; nothing is metered.
        </p>
      )}
      {b && b.invoices.length > 0 && (
        <table class="table" aria-label="Invoices">
          <thead>
            <tr>
              <th>Invoice</th>
              <th>Total</th>
              <th>Status</th>
              <th class="hide-narrow">Date</th>
            </tr>
          </thead>
          <tbody>
            {b.invoices.map((i) => (
              <tr key={i.id}>
                <td>
                  <a href={i.hostedUrl} target="_blank" rel="noopener noreferrer">
                    {i.number}
                  </a>
                </td>
                <td>{euro(i.total)}</td>
                <td>{i.status}</td>
                <td class="hide-narrow">
                  <Time at={i.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
