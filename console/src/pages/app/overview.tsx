import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { App, Deploy } from '../../api/types'
import { useAction, useInterval, useLoad } from '../../hooks'
import { Badge, Empty, ErrorBox, Loading, Time, shortId } from '../../components/ui'
import { DropFolder } from './drop'
import { DeployOutput } from './output'

const terminal = new Set(['live', 'failed', 'cancelled', 'superseded'])

export function Overview({ app, onChange }: { app: App; onChange: () => void }) {
  const slug = app.slug
  const deploys = useLoad(() => ok(api().GET('/api/apps/{slug}/deploys', { params: { path: { slug }, query: { limit: 50 } } })), [slug])
  const busy = deploys.data?.some((d) => !terminal.has(d.status)) ?? false
  useInterval(() => {
    deploys.reload()
    onChange()
  }, 2000, busy)
  const [watching, setWatching] = useState<string | null>(null)
  const current = deploys.data?.find((d) => d.id === app.currentDeployId)
  const newest = deploys.data?.[0]
  const shown = watching ?? (newest && !terminal.has(newest.status) ? newest.id : null)
  const refresh = () => {
    deploys.reload()
    onChange()
  }
  return (
    <div class="stack">
      <div class="panel">
        <h2>Current deploy</h2>
        {current ? (
          <p data-testid="current-deploy">
            <Badge status={current.status} /> <code>{shortId(current.id)}</code> · {current.kind} · since{' '}
            <Time at={current.finishedAt ?? current.updatedAt} />
          </p>
        ) : (
          <p class="muted">Nothing is live yet.</p>
        )}
      </div>
      {app.kind === 'static' ? (
        <DropFolder
          slug={slug}
          onDeployed={(d) => {
            setWatching(d.id)
            refresh()
          }}
        />
      ) : (
        <div class="panel">
          <h2>Deploy</h2>
          <p>
            A service deploys from its source folder or an image with the command line: <code>tori deploy --app {slug}</code>{' '}
            or <code>tori deploy --app {slug} --image REGISTRY/REPO@sha256:…</code>.
          </p>
        </div>
      )}
      {shown && <DeployOutput slug={slug} deployId={shown} />}
      <div class="panel">
        <h2>Deploys</h2>
        <ErrorBox error={deploys.error} />
        {deploys.loading && !deploys.data && <Loading />}
        {deploys.data && deploys.data.length === 0 && (
          <Empty title="No deploys yet">
            {app.kind === 'static' ? 'Drop a folder above to publish it.' : 'Deploy with the command line (see above).'}
          </Empty>
        )}
        {deploys.data && deploys.data.length > 0 && (
          <table class="table" aria-label="Deploys">
            <thead>
              <tr>
                <th>Deploy</th>
                <th>Status</th>
                <th class="hide-narrow">Created</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deploys.data.map((d) => (
                <DeployRow key={d.id} d={d} slug={slug} current={d.id === app.currentDeployId} onWatch={() => setWatching(d.id)} onChange={refresh} />
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  )
}

function DeployRow({ d, slug, current, onWatch, onChange }: { d: Deploy; slug: string; current: boolean; onWatch: () => void; onChange: () => void }) {
  const { busy, error, run } = useAction()
  const params = { params: { path: { slug, id: d.id } } }
  const cancel = () => run(async () => void (await ok(api().POST('/api/apps/{slug}/deploys/{id}/cancel', params)), onChange()))
  const rollback = () => run(async () => void (await ok(api().POST('/api/apps/{slug}/deploys/{id}/rollback', params)), onChange()))
  // Once live is what makes a deploy a rollback target; the API has the last word (409).
  const wasLive = d.status === 'live' || d.status === 'superseded'
  return (
    <tr data-deploy={d.id}>
      <td>
        <code>{shortId(d.id)}</code> <span class="muted small">{d.kind}</span>
        {current && <span class="tag">current</span>}
        {d.rollbackOf && <span class="muted small"> rollback of {shortId(d.rollbackOf)}</span>}
        {d.error && <div class="error small">{d.error}</div>}
        <ErrorBox error={error} />
      </td>
      <td>
        <Badge status={d.status} />
      </td>
      <td class="hide-narrow">
        <Time at={d.createdAt} />
      </td>
      <td class="actions">
        <button type="button" class="link" onClick={onWatch}>
          Output
        </button>
        {!terminal.has(d.status) && (
          <button type="button" class="secondary" disabled={busy} onClick={cancel}>
            Cancel
          </button>
        )}
        {wasLive && !current && (
          <button type="button" class="secondary" disabled={busy} onClick={rollback}>
            Roll back
          </button>
        )}
      </td>
    </tr>
  )
}
