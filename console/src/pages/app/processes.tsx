import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { FormationEntry } from '../../api/types'
import { useAction, useInterval, useLoad } from '../../hooks'
import { Empty, ErrorBox, Loading } from '../../components/ui'
import { CronJobs } from './cron'

// Processes shows a service's process types with a scale control each, and its cron jobs.
// A static site runs no processes, so it gets a sentence instead.
export function Processes({ slug, kind }: { slug: string; kind: string }) {
  if (kind !== 'service') {
    return (
      <div class="panel">
        <Empty title="Processes are for services">A static site is served as files: it runs no processes and no cron jobs.</Empty>
      </div>
    )
  }
  return (
    <div class="stack">
      <Formation slug={slug} />
      <CronJobs slug={slug} />
    </div>
  )
}

function Formation({ slug }: { slug: string }) {
  const formation = useLoad(() => ok(api().GET('/api/apps/{slug}/formation', { params: { path: { slug } } })), [slug])
  // The zone reports instances up a few seconds after a scale: ask again until they agree.
  const settling = formation.data?.some((e) => e.running !== e.quantity) ?? false
  useInterval(formation.reload, 3000, settling)
  const scale = useAction()
  const apply = (type: string, quantity: number) =>
    scale.run(async () => {
      await ok(api().PATCH('/api/apps/{slug}/formation', { params: { path: { slug } }, body: { updates: [{ type, quantity }] } }))
      formation.reload()
    })
  return (
    <div class="panel">
      <h2>Processes</h2>
      <p class="muted small">
        Declared by the live deploy: <code>processes</code> in tori.json, a Procfile, or an image deploy's <code>processes</code>. Only{' '}
        <code>web</code> answers requests; scaling makes no new deploy.
      </p>
      <ErrorBox error={formation.error ?? scale.error} />
      {formation.loading && !formation.data && <Loading />}
      {formation.data && formation.data.length === 0 && <Empty title="No processes yet">They appear once a deploy is live.</Empty>}
      {formation.data && formation.data.length > 0 && (
        <table class="table" aria-label="Processes">
          <thead>
            <tr>
              <th>Type</th>
              <th>Command</th>
              <th>Running</th>
              <th>Scale</th>
            </tr>
          </thead>
          <tbody>
            {formation.data.map((e) => (
              <ProcessRow key={e.type} entry={e} busy={scale.busy} onScale={(q) => apply(e.type, q)} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

function ProcessRow({ entry, busy, onScale }: { entry: FormationEntry; busy: boolean; onScale: (quantity: number) => void }) {
  const [wanted, setWanted] = useState(String(entry.quantity))
  const n = Number(wanted)
  const valid = wanted.trim() !== '' && Number.isInteger(n) && n >= 0
  const id = `scale-${entry.type}`
  const submit = (e: Event) => {
    e.preventDefault()
    if (valid && n !== entry.quantity) onScale(n)
  }
  return (
    <tr data-process={entry.type}>
      <td>
        <code>{entry.type}</code>
      </td>
      <td>
        <code class="wrap">{entry.command}</code>
      </td>
      <td>
        {entry.running} of {entry.quantity}
      </td>
      <td>
        <form class="row" onSubmit={submit} aria-label={`Scale ${entry.type}`}>
          <label class="visually-hidden" for={id}>
            Instances of {entry.type}
          </label>
          <input id={id} type="number" min={0} step={1} inputMode="numeric" class="qty" value={wanted} onInput={(e) => setWanted(e.currentTarget.value)} />
          <button type="submit" class="secondary" disabled={busy || !valid || n === entry.quantity}>
            Scale
          </button>
        </form>
      </td>
    </tr>
  )
}
