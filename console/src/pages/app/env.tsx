import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { envKeyInputPattern, envKeyMaxLength } from '../../api/contract'
import { useAction, useLoad } from '../../hooks'
import { Empty, ErrorBox, Loading } from '../../components/ui'
import { useConfirm } from '../../components/confirm'

// Env lists the app's variables as the API shows them (masked) and sets or removes them. A
// value typed here is sent once and never shown again; the field is a password field.
export function Env({ slug, kind }: { slug: string; kind: string }) {
  const vars = useLoad(() => ok(api().GET('/api/apps/{slug}/env', { params: { path: { slug } } })), [slug])
  const [key, setKey] = useState('')
  const [value, setValue] = useState('')
  const save = useAction()
  const remove = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    save.run(async () => {
      await ok(api().PUT('/api/apps/{slug}/env', { params: { path: { slug } }, body: { key: key.trim(), value } }))
      setKey('')
      setValue('')
      vars.reload()
    })
  }
  const [confirm, dialog] = useConfirm()
  const unset = async (k: string) => {
    const yes = await confirm({
      title: `Remove ${k}?`,
      body: <p>{kind === 'service' ? 'The running revision keeps it until the next deploy; after that the app no longer sees it.' : 'The variable is removed.'} Its value cannot be shown again.</p>,
      action: `Remove ${k}`,
    })
    if (!yes) return
    remove.run(async () => {
      await ok(api().DELETE('/api/apps/{slug}/env/{key}', { params: { path: { slug, key: k } } }))
      vars.reload()
    })
  }
  return (
    <div class="stack">
      {dialog}
      <form class="panel inline-form" onSubmit={submit} aria-label="Set a variable">
        <div class="field">
          <label for="env-key">Key</label>
          <input
            id="env-key"
            required
            pattern={envKeyInputPattern}
            maxLength={envKeyMaxLength}
            title="capital letters, digits and underscores, starting with a letter"
            autocomplete="off"
            spellcheck={false}
            placeholder="DATABASE_URL"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value.toUpperCase())}
          />
        </div>
        <div class="field grow">
          <label for="env-value">Value</label>
          <input id="env-value" type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={save.busy}>
          Set
        </button>
        <ErrorBox error={save.error} />
      </form>
      {kind === 'static' && <p class="muted small">A static site is served as files: its variables are kept but not read.</p>}
      <div class="panel">
        <h2>Variables</h2>
        <ErrorBox error={vars.error ?? remove.error} />
        {vars.loading && !vars.data && <Loading />}
        {vars.data && vars.data.length === 0 && <Empty title="No variables">Set one above; a service reads them from its next deploy.</Empty>}
        {vars.data && vars.data.length > 0 && (
          <table class="table" aria-label="Variables">
            <thead>
              <tr>
                <th>Key</th>
                <th>Value</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {vars.data.map((v) => (
                <tr key={v.key} data-env={v.key}>
                  <td>
                    <code>{v.key}</code>
                  </td>
                  <td>
                    <code class="muted">{v.value}</code>
                  </td>
                  <td class="actions">
                    <button type="button" class="secondary" disabled={remove.busy} onClick={() => unset(v.key)} aria-label={`Remove ${v.key}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  )
}
