import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { App, Deploy } from '../../api/types'
import { useAction, useInterval, useLoad } from '../../hooks'
import { Badge, Empty, ErrorBox, Loading, Time, shortId } from '../../components/ui'
import { DropFolder } from './drop'
import { DeployOutput } from './output'
import { SourceDeploy } from './source'

const terminal = new Set(['live', 'failed', 'cancelled', 'superseded'])

export function Overview({ app, onChange }: { app: App; onChange: () => void }) {
  const slug = app.slug
  const deploys = useLoad(() => ok(api().GET('/api/apps/{slug}/deploys', { params: { path: { slug }, query: { limit: 50 } } })), [slug])
  const busy = deploys.data?.some((d) => !terminal.has(d.status)) ?? false
  // A deploy reads live a moment before the app's record names it current (the apps service
  // learns it from the deploys service's event): keep asking until the two agree, or the
  // deploy it replaced would stay marked current, without its Roll back.
  const liveId = deploys.data?.find((d) => d.status === 'live')?.id
  const settling = liveId !== undefined && liveId !== app.currentDeployId
  useInterval(() => {
    deploys.reload()
    onChange()
  }, 2000, busy || settling)
  const [watching, setWatching] = useState<string | null>(null)
  // The live deploy as deploys tells it: the app's currentDeployId reaches the apps service a
  // moment later (an event), and a Redeploy clicked in that moment must not act on the deploy
  // the edge has just stopped serving.
  const current = deploys.data?.find((d) => d.status === 'live') ?? deploys.data?.find((d) => d.id === app.currentDeployId)
  const newest = deploys.data?.[0]
  const shown = watching ?? (newest && !terminal.has(newest.status) ? newest.id : null)
  const refresh = () => {
    deploys.reload()
    onChange()
  }
  const redeploy = useAction()
  // Redeploy the current deploy: an image deploy is deployed again with forceRestart (a new
  // revision with the app's variables as they are now); a source or static deploy through
  // its rollback route (the same build, with the variables it was deployed with).
  const again = (d: Deploy) =>
    redeploy.run(async () => {
      const next =
        d.kind === 'image' && d.image
          ? await ok(api().POST('/api/apps/{slug}/deploys', { params: { path: { slug } }, body: { image: d.image, release: d.release ?? undefined, forceRestart: true } }))
          : await ok(api().POST('/api/apps/{slug}/deploys/{id}/rollback', { params: { path: { slug, id: d.id } } }))
      setWatching(next.id)
      refresh()
    })
  return (
    <div class="stack">
      <div class="panel">
        <h2>Current deploy</h2>
        {current ? (
          <>
            <p data-testid="current-deploy">
              <Badge status={current.status} /> <code>{shortId(current.id)}</code> · {current.kind} · since{' '}
              <Time at={current.finishedAt ?? current.updatedAt} />
            </p>
            <div class="row">
              <button type="button" class="secondary" disabled={redeploy.busy || busy} onClick={() => again(current)}>
                {redeploy.busy ? 'Redeploying…' : 'Redeploy'}
              </button>
              <span class="muted small">
                {current.kind === 'image'
                  ? 'A new revision of the same image, with the variables as they are now.'
                  : 'The same build again, with the variables it was deployed with; new variables need a new deploy.'}
              </span>
            </div>
            <ErrorBox error={redeploy.error} />
          </>
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
        <SourceDeploy
          slug={slug}
          onDeployed={(d) => {
            setWatching(d.id)
            refresh()
          }}
        />
      )}
      {shown && <DeployOutput slug={slug} deployId={shown} />}
      <div class="panel">
        <h2>Deploys</h2>
        <ErrorBox error={deploys.error} />
        {deploys.loading && !deploys.data && <Loading />}
        {deploys.data && deploys.data.length === 0 && (
          <Empty title="No deploys yet">
            {app.kind === 'static' ? 'Drop a folder above to publish it.' : 'Choose its source above, or run tori deploy in its folder.'}
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
