import { useEffect, useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { LogEntry } from '../../api/types'
import { useInterval, useLoad } from '../../hooks'
import { ErrorBox, shortId } from '../../components/ui'

const terminal = new Set(['live', 'failed', 'cancelled', 'superseded'])

// DeployOutput is one deploy's build, release and system lines, followed while it runs.
export function DeployOutput({ slug, deployId }: { slug: string; deployId: string }) {
  const deploy = useLoad(() => ok(api().GET('/api/apps/{slug}/deploys/{id}', { params: { path: { slug, id: deployId } } })), [slug, deployId])
  const [lines, setLines] = useState<LogEntry[]>([])
  const [error, setError] = useState<string | null>(null)
  const running = deploy.data ? !terminal.has(deploy.data.status) : true
  const read = async () => {
    if (!deploy.data) return
    const start = new Date(Date.parse(deploy.data.createdAt) - 1000)
    const end = new Date(Math.min(Date.now() + 1000, start.getTime() + 24 * 3600 * 1000))
    try {
      const out: LogEntry[] = []
      let cursor: string | undefined
      for (let page = 0; page < 10; page++) {
        const p = await ok(
          api().GET('/api/apps/{slug}/logs', {
            params: { path: { slug }, query: { start: start.toISOString(), end: end.toISOString(), limit: 500, cursor } },
          }),
        )
        out.push(...p.entries.filter((e) => e.deployId === deployId))
        if (!p.next) break
        cursor = p.next
      }
      setLines(out)
      setError(null)
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    }
  }
  useInterval(() => {
    deploy.reload()
    read()
  }, 2000, running)
  // Once more whenever the status moves, so the last lines of a finished deploy show.
  useEffect(() => void read(), [deploy.data?.status])
  return (
    <div class="panel" aria-live="polite">
      <h2>
        Output of <code>{shortId(deployId)}</code> {deploy.data && <span class="muted small">({deploy.data.status})</span>}
      </h2>
      <ErrorBox error={error ?? deploy.error} />
      <pre class="log" data-testid="deploy-output">
        {lines.length === 0 ? (running ? 'Waiting for output…' : 'No output.') : lines.map((l) => `${l.stream.padEnd(7)} ${l.message}\n`).join('')}
      </pre>
    </div>
  )
}
