import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { useAction, useLoad } from '../../hooks'
import { Badge, CopyButton, Empty, ErrorBox, Loading } from '../../components/ui'
import { useConfirm } from '../../components/confirm'
import type { Domain } from '../../api/types'

// The edge's HTTPS certificate for a hostname: pending until the first order succeeds, issued
// until its end (renewed on its own), failed with the authority's reason while the edge retries.
function Certificate({ cert }: { cert: Domain['certificate'] }) {
  return (
    <div class="small">
      <p>
        HTTPS certificate: <Badge status={cert.status} />
        {cert.status === 'issued' && cert.expiresAt && <> until {cert.expiresAt.slice(0, 10)}, renewed on its own</>}
        {cert.status === 'failed' && <> — Tori keeps trying; check that the hostname's DNS points at Tori.</>}
      </p>
      {cert.lastError && (
        <p>
          Last error: <code class="wrap">{cert.lastError}</code>
        </p>
      )}
    </div>
  )
}

export function Domains({ slug, kind }: { slug: string; kind: string }) {
  const domains = useLoad(() => ok(api().GET('/api/apps/{slug}/domains', { params: { path: { slug } } })), [slug])
  const [hostname, setHostname] = useState('')
  const add = useAction()
  const remove = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    add.run(async () => {
      await ok(api().POST('/api/apps/{slug}/domains', { params: { path: { slug } }, body: { hostname: hostname.trim().toLowerCase() } }))
      setHostname('')
      domains.reload()
    })
  }
  const [confirm, dialog] = useConfirm()
  const drop = async (h: string) => {
    const yes = await confirm({
      title: `Remove ${h}?`,
      body: <p>The site stops answering at {h} at once. Adding it back needs its TXT record checked again.</p>,
      action: `Remove ${h}`,
    })
    if (!yes) return
    remove.run(async () => {
      await ok(api().DELETE('/api/apps/{slug}/domains/{hostname}', { params: { path: { slug, hostname: h } } }))
      domains.reload()
    })
  }
  if (kind !== 'static') {
    return (
      <div class="panel">
        <Empty title="Custom domains are for static sites">A service answers at its app URL.</Empty>
      </div>
    )
  }
  return (
    <div class="stack">
      {dialog}
      <form class="panel inline-form" onSubmit={submit} aria-label="Add a domain">
        <div class="field grow">
          <label for="domain-host">Hostname</label>
          <input id="domain-host" required placeholder="www.example.com" autocomplete="off" value={hostname} onInput={(e) => setHostname(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={add.busy}>
          Add domain
        </button>
        <ErrorBox error={add.error} />
      </form>
      <div class="panel">
        <h2>Domains</h2>
        <ErrorBox error={domains.error ?? remove.error} />
        {domains.loading && !domains.data && <Loading />}
        {domains.data && domains.data.length === 0 && (
          <Empty title="No custom domains">Add a hostname above; we show the TXT record that proves it is yours.</Empty>
        )}
        {domains.data?.map((d) => (
          <div key={d.hostname} class="domain">
            <div class="card-head">
              <strong>{d.hostname}</strong>
              <Badge status={d.status} />
            </div>
            {d.status === 'active' && <Certificate cert={d.certificate} />}
            {d.status === 'pending' && (
              <div class="small">
                <p>Create this DNS record; the domain turns active once it is seen.</p>
                <dl class="record">
                  <dt>Type</dt>
                  <dd>
                    <code>{d.verification.type}</code>
                  </dd>
                  <dt>Name</dt>
                  <dd>
                    <code>{d.verification.name}</code> <CopyButton text={d.verification.name} />
                  </dd>
                  <dt>Value</dt>
                  <dd>
                    <code class="wrap">{d.verification.value}</code> <CopyButton text={d.verification.value} />
                  </dd>
                </dl>
              </div>
            )}
            <button type="button" class="secondary" disabled={remove.busy} onClick={() => drop(d.hostname)}>
              Remove {d.hostname}
            </button>
          </div>
        ))}
      </div>
    </div>
  )
}
