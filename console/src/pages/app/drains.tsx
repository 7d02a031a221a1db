import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { Drain, DrainCreated } from '../../api/types'
import { drainURLProblem } from '../../api/drains'
import { useAction, useLoad } from '../../hooks'
import { useConfirm } from '../../components/confirm'
import { Badge, CopyButton, Empty, ErrorBox, Loading, Time } from '../../components/ui'

// Drains sends the app's log lines to the team's own collector; an admin's (the page shows it
// to admins and owners alone, as the API answers it to them alone). A new HTTPS drain's
// signing secret is shown once, here, and never again.
export function Drains({ slug }: { slug: string }) {
  const drains = useLoad(() => ok(api().GET('/api/apps/{slug}/drains', { params: { path: { slug } } })), [slug])
  const [url, setUrl] = useState('')
  const [created, setCreated] = useState<DrainCreated | null>(null)
  const [tested, setTested] = useState<string | null>(null)
  const add = useAction()
  const act = useAction()
  const [confirm, dialog] = useConfirm()
  const path = (id: string) => ({ params: { path: { slug, id } } })
  const submit = (e: Event) => {
    e.preventDefault()
    const problem = drainURLProblem(url.trim())
    if (problem) {
      add.setError(problem)
      return
    }
    add.run(async () => {
      setCreated(await ok(api().POST('/api/apps/{slug}/drains', { params: { path: { slug } }, body: { url: url.trim() } })))
      setUrl('')
      drains.reload()
    })
  }
  const test = (d: Drain) =>
    act.run(async () => {
      setTested(null)
      const r = await ok(api().POST('/api/apps/{slug}/drains/{id}/test', path(d.id)))
      setTested(r.delivered ? `Test line delivered to ${d.url} (${r.status}).` : `Test line not delivered to ${d.url}: ${r.error ?? 'no answer'}.`)
      drains.reload()
    })
  const remove = async (d: Drain) => {
    const yes = await confirm({
      title: 'Remove this drain?',
      body: <p>Lines stop going to {d.url} at once; any not yet sent are not sent.</p>,
      action: 'Remove drain',
    })
    if (!yes) return
    act.run(async () => {
      await ok(api().DELETE('/api/apps/{slug}/drains/{id}', path(d.id)))
      drains.reload()
    })
  }
  return (
    <div class="panel" id="drains">
      {dialog}
      <h2>Log drains</h2>
      <p class="muted small">
        Every line of the app, within about a second, to your own collector: <code>https://</code> (NDJSON, each request signed{' '}
        <code>Tori-Signature: sha256=HMAC(secret, body)</code>) or <code>syslog+tls://host:port</code> (RFC 5424). Lines a slow or failing
        receiver could not take are counted and said in the app's log.
      </p>
      {created?.secret && (
        <div class="secret" role="status" data-testid="drain-secret">
          <p>Copy the signing secret now: it is shown this once and never again.</p>
          <div class="row">
            <code class="wrap">{created.secret}</code>
            <CopyButton text={created.secret} />
          </div>
          <button type="button" class="link" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form class="inline-form" onSubmit={submit} aria-label="Add a drain">
        <div class="field grow">
          <label for="drain-url">Collector URL</label>
          <input id="drain-url" required inputMode="url" autocomplete="off" placeholder="https://collector.example.com/tori" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={add.busy}>
          Add drain
        </button>
      </form>
      <ErrorBox error={add.error ?? drains.error ?? act.error} />
      {tested && <p role="status">{tested}</p>}
      {drains.loading && !drains.data && <Loading />}
      {drains.data && drains.data.length === 0 && <Empty title="No drains">Add a collector's URL above.</Empty>}
      {drains.data && drains.data.length > 0 && (
        <table class="table" aria-label="Drains">
          <thead>
            <tr>
              <th>URL</th>
              <th>Status</th>
              <th>Last day</th>
              <th>Last delivery</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {drains.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <code class="wrap">{d.url}</code> <span class="muted small">{d.kind}</span>
                </td>
                <td>
                  <Badge status={d.status} />
                  {d.lastError && <p class="small error-text">{d.lastError}</p>}
                </td>
                <td class="small">
                  {d.delivered24h} sent
                  {d.dropped24h > 0 && <div class="error-text">{d.dropped24h} dropped</div>}
                </td>
                <td>
                  <Time at={d.lastDeliveryAt} />
                </td>
                <td>
                  <div class="row">
                    <button type="button" class="secondary" disabled={act.busy} onClick={() => test(d)}>
                      Send a test line
                    </button>
                    <button type="button" class="secondary" disabled={act.busy} onClick={() => remove(d)}>
                      Remove
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
