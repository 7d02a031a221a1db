import { useEffect, useState } from 'preact/hooks'
import { api, ok } from '../api/client'
import { messageOf } from '../api/errors'
import type { AuditEntry, AuditQuery } from '../api/types'
import { Badge, Empty, ErrorBox, Loading, Time } from '../components/ui'
import { PageHeading } from '../components/heading'

// The windows offered; the plan decides how far back the log goes (older: 410 beyond_retention).
const ranges: [string, number][] = [
  ['Last hour', 3600],
  ['Last 24 hours', 86400],
  ['Last 7 days', 7 * 86400],
  ['Last 30 days', 30 * 86400],
  ['Last 365 days', 365 * 86400],
]

type Filters = { action: string; actor: string; app: string; range: number }

// AuditPage is a team's audit log, newest first, with filters and "Load more" following the
// API's cursor.
export function AuditPage({ team }: { team: string }) {
  const [filters, setFilters] = useState<Filters>({ action: '', actor: '', app: '', range: 86400 })
  const [draft, setDraft] = useState<Filters>(filters)
  const [entries, setEntries] = useState<AuditEntry[] | null>(null)
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const query = (f: Filters, after: string | null): AuditQuery => {
    const q: AuditQuery = { start: new Date(Date.now() - f.range * 1000).toISOString() }
    if (f.action.trim()) q.action = f.action.trim()
    if (f.actor.trim()) q.actor = f.actor.trim()
    if (f.app.trim()) q.app = f.app.trim()
    if (after) q.cursor = after
    return q
  }
  const load = async (f: Filters, after: string | null) => {
    setBusy(true)
    setError(null)
    try {
      const page = await ok(api().GET('/api/teams/{team}/audit', { params: { path: { team }, query: query(f, after) } }))
      setEntries((prev) => (after && prev ? [...prev, ...page.entries] : page.entries))
      setCursor(page.nextCursor ?? null)
    } catch (e) {
      setError(messageOf(e))
      if (!after) setEntries(null)
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => {
    setEntries(null)
    void load(filters, null)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [team, filters])

  const field = (k: 'action' | 'actor' | 'app', label: string, hint: string) => (
    <div class="field">
      <label for={`audit-${k}`}>{label}</label>
      <input id={`audit-${k}`} placeholder={hint} value={draft[k]} onInput={(e) => setDraft({ ...draft, [k]: e.currentTarget.value })} />
    </div>
  )
  return (
    <section class="stack">
      <PageHeading title={`Audit log · ${team}`} />
      <form
        class="panel inline-form"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault()
          setFilters({ ...draft })
        }}
      >
        {field('action', 'Action', 'app.delete')}
        {field('actor', 'Actor', 'email, user or token id')}
        {field('app', 'App', 'my-app')}
        <div class="field">
          <label for="audit-range">Time</label>
          <select id="audit-range" value={draft.range} onChange={(e) => setDraft({ ...draft, range: Number(e.currentTarget.value) })}>
            {ranges.map(([label, secs]) => (
              <option key={secs} value={secs}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Show
        </button>
      </form>
      <ErrorBox error={error} />
      {busy && !entries && <Loading />}
      {entries && entries.length === 0 && <Empty title="Nothing in this window">Changes and refused attempts show here as they happen.</Empty>}
      {entries && entries.length > 0 && (
        <table class="table" aria-label="Audit log">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>Action</th>
              <th class="hide-narrow">Target</th>
              <th>Outcome</th>
              <th class="hide-narrow">From</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} data-audit={e.action}>
                <td>
                  <Time at={e.at} />
                </td>
                <td>
                  {e.actor.email || e.actor.userId || e.actor.type}
                  {e.actor.tokenId && <div class="muted small">token {e.actor.tokenId}</div>}
                </td>
                <td>
                  <code>{e.action}</code>
                  {e.app && <div class="muted small">{e.app}</div>}
                </td>
                <td class="hide-narrow">
                  {e.target}
                  {metadata(e)}
                </td>
                <td>
                  <Badge status={e.outcome} />
                </td>
                <td class="hide-narrow">{e.ip ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" class="secondary" disabled={busy} onClick={() => load(filters, cursor)}>
          {busy ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  )
}

// metadata shows an entry's details: names only (the API never writes values or secrets).
function metadata(e: AuditEntry) {
  const m = Object.entries(e.metadata ?? {})
  if (m.length === 0) return null
  return <div class="muted small">{m.map(([k, v]) => `${k}: ${String(v)}`).join(' · ')}</div>
}
