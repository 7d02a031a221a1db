import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { Preview } from '../../api/types'
import { useAction, useInterval, useLoad } from '../../hooks'
import { useConfirm } from '../../components/confirm'
import { Link } from '../../router'
import { Badge, Empty, ErrorBox, Loading, Time } from '../../components/ui'

// gone: an expired or removed preview, whose URL answers 410.
const gone = (p: Preview) => p.status === 'expired' || p.status === 'deleted'

// Previews lists the app's previews with their URLs and when they end. Who may deploy (a
// developer and up) may promote a ready one or remove one; a viewer sees the list alone.
export function Previews({ slug, canDeploy }: { slug: string; canDeploy: boolean }) {
  const previews = useLoad(() => ok(api().GET('/api/apps/{slug}/previews', { params: { path: { slug } } })), [slug])
  // A preview deploying turns ready or failed by itself: ask again until none is under way.
  useInterval(previews.reload, 3000, previews.data?.some((p) => p.status === 'deploying') ?? false)
  const act = useAction()
  const [promoted, setPromoted] = useState<string | null>(null)
  const [confirm, dialog] = useConfirm()
  const path = (id: string) => ({ params: { path: { slug, id } } })
  const promote = async (p: Preview) => {
    const yes = await confirm({
      title: `Make ${p.name} live?`,
      body: (
        <p>
          A new deploy of what {p.name} runs, with the app's live variables and database rather than the preview's, its release command
          included{p.envKeys.length > 0 && '; a source preview is built again, since its build may have read its own variables'}. The preview
          stays until it ends.
        </p>
      ),
      action: `Promote ${p.name}`,
    })
    if (!yes) return
    act.run(async () => {
      const d = await ok(api().POST('/api/apps/{slug}/previews/{id}/promote', path(p.id)))
      setPromoted(`Promoted ${p.name}: deploy ${d.id.slice(-8)} is ${d.status}.`)
      previews.reload()
    })
  }
  const remove = async (p: Preview) => {
    const yes = await confirm({
      title: `Remove ${p.name}?`,
      body: <p>{p.url} answers 410 Gone from now on. Deploying the same name again makes a new one at the same URL.</p>,
      action: `Remove ${p.name}`,
    })
    if (!yes) return
    act.run(async () => {
      await ok(api().DELETE('/api/apps/{slug}/previews/{id}', path(p.id)))
      previews.reload()
    })
  }
  return (
    <div class="panel">
      {dialog}
      <h2>Previews</h2>
      <p class="muted small">
        A preview runs a deploy at its own URL without touching the live app: <code>tori deploy --preview NAME</code>. Its variables are the
        app's with its own over them, without the database unless asked (<code>--database shared</code>); it ends after its time to live.
      </p>
      <ErrorBox error={previews.error ?? act.error} />
      {promoted && (
        <p role="status">
          {promoted} <Link href={`/apps/${slug}`}>See the deploys</Link>
        </p>
      )}
      {previews.loading && !previews.data && <Loading />}
      {previews.data && previews.data.length === 0 && (
        <Empty title="No previews">
          Make one from a folder or an image with <code>tori deploy --preview pr-12 --ttl 48h</code>.
        </Empty>
      )}
      {previews.data && previews.data.length > 0 && (
        <table class="table" aria-label="Previews">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>URL</th>
              <th>Ends</th>
              <th>Variables</th>
              {canDeploy && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {previews.data.map((p) => (
              <tr key={p.id} data-preview={p.name}>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>
                  <Badge status={p.status} />
                  {p.error && <p class="small error-text">{p.error.message}</p>}
                </td>
                <td>
                  {gone(p) ? (
                    <span class="muted">{p.url}</span>
                  ) : (
                    <a href={p.url} target="_blank" rel="noopener noreferrer">
                      {p.url}
                    </a>
                  )}
                </td>
                <td>
                  <Time at={p.expiresAt} />
                </td>
                <td class="small">
                  {p.envKeys.length > 0 ? p.envKeys.map((k) => <code key={k}>{k} </code>) : <span class="muted">the app's</span>}
                  <div class="muted">database: {p.database}</div>
                </td>
                {canDeploy && (
                  <td>
                    <div class="row">
                      <button type="button" class="secondary" disabled={act.busy || p.status !== 'ready'} onClick={() => promote(p)}>
                        Promote {p.name}
                      </button>
                      {!gone(p) && (
                        <button type="button" class="secondary" disabled={act.busy} onClick={() => remove(p)}>
                          Remove {p.name}
                        </button>
                      )}
                    </div>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
