import { useEffect, useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { followLogs } from '../../api/logstream'
import type { LogEntry } from '../../api/types'
import { useInterval, useLoad } from '../../hooks'
import { ErrorBox, shortId } from '../../components/ui'

const terminal = new Set(['live', 'failed', 'cancelled', 'superseded'])

// linger is how long the stream stays open after the deploy ends: the zone ships its last
// lines in batches, a moment after the status moves.
const linger = 3000

// DeployOutput is one deploy's build, release and system lines: a running deploy's arrive
// on the live log stream (its status is asked every 2 s); a finished one's are read once.
export function DeployOutput({ slug, deployId }: { slug: string; deployId: string }) {
  const deploy = useLoad(() => ok(api().GET('/api/apps/{slug}/deploys/{id}', { params: { path: { slug, id: deployId } } })), [slug, deployId])
  const [lines, setLines] = useState<LogEntry[]>([])
  const [error, setError] = useState<string | null>(null)
  const [streaming, setStreaming] = useState<boolean | null>(null) // null until the first answer
  const running = deploy.data ? !terminal.has(deploy.data.status) : true
  const createdAt = deploy.data?.createdAt

  // Decided once, on the first answer: a running deploy is followed, a finished one read.
  useEffect(() => {
    if (deploy.data && streaming === null) setStreaming(running)
  }, [deploy.data])

  useEffect(() => {
    if (!streaming || !createdAt) return
    const seen = new Set<string>()
    const start = new Date(Date.parse(createdAt) - 1000).toISOString()
    return followLogs(
      slug,
      { start },
      {
        onLine: (e) => {
          if (e.deployId !== deployId || seen.has(e.id)) return
          seen.add(e.id)
          setLines((ls) => [...ls, e])
        },
        onStatus: setError,
        onEnd: setError,
      },
    )
  }, [slug, deployId, streaming, createdAt])

  // A followed deploy that ended: its last lines are let in, then the stream closes.
  useEffect(() => {
    if (!streaming || running) return
    const t = setTimeout(() => setStreaming(false), linger)
    return () => clearTimeout(t)
  }, [streaming, running])

  useEffect(() => {
    if (streaming !== false || !createdAt) return
    const start = new Date(Date.parse(createdAt) - 1000)
    const end = new Date(Math.min(Date.now() + 1000, start.getTime() + 24 * 3600 * 1000))
    readOnce(slug, deployId, start, end).then(
      (out) => {
        setLines(out)
        setError(null)
      },
      (e) => setError(e instanceof Error ? e.message : String(e)),
    )
  }, [slug, deployId, streaming, createdAt])

  useInterval(() => deploy.reload(), 2000, running)
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

// readOnce reads a finished deploy's lines from the window route.
async function readOnce(slug: string, deployId: string, start: Date, end: Date): Promise<LogEntry[]> {
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
  return out
}
