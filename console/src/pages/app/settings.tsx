import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { useAction } from '../../hooks'
import { navigate } from '../../router'
import { ErrorBox } from '../../components/ui'

// Deleting takes typing the slug, as on Heroku: serving stops at once and nothing comes back.
export function Settings({ slug }: { slug: string }) {
  const [typed, setTyped] = useState('')
  const { busy, error, run } = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    if (typed !== slug) return
    run(async () => {
      await ok(api().DELETE('/api/apps/{slug}', { params: { path: { slug } } }))
      navigate('/apps')
    })
  }
  return (
    <form class="panel danger" onSubmit={submit} aria-label="Delete this app">
      <h2>Delete this app</h2>
      <p>
        Serving stops at once; its deploys, logs, variables, domains and database go with it. Type <code>{slug}</code> to
        confirm.
      </p>
      <label for="confirm-slug">App name</label>
      <input id="confirm-slug" autocomplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
      <ErrorBox error={error} />
      <button type="submit" class="danger" disabled={busy || typed !== slug}>
        Delete {slug}
      </button>
    </form>
  )
}
