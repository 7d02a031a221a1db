import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { ApiError } from '../../api/errors'
import { useAction, useInterval, useLoad } from '../../hooks'
import { Badge, bytes, Empty, ErrorBox, Loading, Time, shortId } from '../../components/ui'

export function DatabaseTab({ slug, kind }: { slug: string; kind: string }) {
  const params = { params: { path: { slug } } }
  // A 404 here means the app has no database yet: that is the empty state, not an error.
  const db = useLoad(
    () =>
      ok(api().GET('/api/apps/{slug}/database', params)).catch((e) => {
        if (e instanceof ApiError && e.status === 404) return null
        throw e
      }),
    [slug],
  )
  const dumps = useLoad(
    () => (db.data ? ok(api().GET('/api/apps/{slug}/database/dumps', params)) : Promise.resolve(null)),
    [slug, db.data?.id],
  )
  useInterval(db.reload, 3000, db.data?.status === 'provisioning')
  const act = useAction()
  const [restored, setRestored] = useState<string | null>(null)
  const create = () => act.run(async () => void (await ok(api().POST('/api/apps/{slug}/database', params)), db.reload()))
  const restore = (dumpId: string) =>
    act.run(async () => {
      const r = await ok(api().POST('/api/apps/{slug}/database/restores', { ...params, body: { dumpId } }))
      setRestored(`Restore ${shortId(r.id)} of dump ${shortId(dumpId)}: ${r.status}`)
    })
  if (kind !== 'service') {
    return (
      <div class="panel">
        <Empty title="Managed databases are for service apps">A static site runs nothing that could connect to one.</Empty>
      </div>
    )
  }
  if (db.loading && !db.data && !db.error) return <Loading />
  return (
    <div class="stack">
      <div class="panel">
        <h2>Database</h2>
        <ErrorBox error={db.error ?? act.error} />
        {db.data === null && !db.error && (
          <Empty title="No database">
            A managed Postgres for this app; its URL reaches the app as <code>DATABASE_URL</code>.{' '}
            <button type="button" onClick={create} disabled={act.busy}>
              Create a database
            </button>
          </Empty>
        )}
        {db.data && (
          <p data-testid="database-status">
            <Badge status={db.data.status} /> created <Time at={db.data.createdAt} /> {db.data.message && <span class="muted">· {db.data.message}</span>}
          </p>
        )}
      </div>
      {db.data && (
        <div class="panel">
          <h2>Dumps</h2>
          {restored && <p role="status">{restored}</p>}
          <ErrorBox error={dumps.error} />
          {Array.isArray(dumps.data) && dumps.data.length === 0 && <Empty title="No dumps yet">Dumps are taken daily; run <code>tori db dump</code> for one now.</Empty>}
          {Array.isArray(dumps.data) && dumps.data.length > 0 && (
            <table class="table" aria-label="Dumps">
              <tbody>
                {dumps.data.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Time at={d.createdAt} />
                    </td>
                    <td>{bytes(d.sizeBytes)}</td>
                    <td>
                      <Badge status={d.status} />
                    </td>
                    <td class="actions">
                      <button type="button" class="secondary" disabled={act.busy} onClick={() => restore(d.id)}>
                        Restore
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </div>
  )
}
