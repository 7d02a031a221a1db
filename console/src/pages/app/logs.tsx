import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import { logPageMax } from '../../api/contract'
import { messageOf } from '../../api/errors'
import type { LogEntry } from '../../api/types'
import { followLogs } from '../../api/logstream'
import { Empty, ErrorBox } from '../../components/ui'

const windows = [
  ['15m', 15],
  ['1h', 60],
  ['6h', 360],
  ['24h', 1440],
] as const

const MAX_LINES = 2000

async function readWindow(slug: string, start: Date, end: Date, process: string): Promise<{ entries: LogEntry[]; retentionDays: number }> {
  const entries: LogEntry[] = []
  let cursor: string | undefined
  let retentionDays = 0
  for (let page = 0; page < 8; page++) {
    const p = await ok(
      api().GET('/api/apps/{slug}/logs', {
        params: { path: { slug }, query: { start: start.toISOString(), end: end.toISOString(), limit: logPageMax, cursor, process: process || undefined } },
      }),
    )
    retentionDays = p.retentionDays
    entries.push(...p.entries)
    if (!p.next) break
    cursor = p.next
  }
  return { entries, retentionDays }
}

// Logs shows a time window of the app's lines; Follow then keeps the live stream open (as
// `tori logs --follow` does): new lines arrive as the zone ships them, each id once, and a
// dropped stream reconnects with backoff and resumes where it stopped.
export function Logs({ slug }: { slug: string }) {
  const [minutes, setMinutes] = useState(60)
  // A process type (worker) or one instance (worker.2, cron.nightly.<run>); empty: every line.
  const [process, setProcess] = useState('')
  const [follow, setFollow] = useState(false)
  const [lines, setLines] = useState<LogEntry[]>([])
  const [error, setError] = useState<string | null>(null)
  const [retention, setRetention] = useState<number | null>(null)
  const [loading, setLoading] = useState(true)
  const seen = useRef(new Set<string>())
  const box = useRef<HTMLPreElement>(null)

  useEffect(() => {
    let current = true
    setLoading(true)
    const end = new Date()
    const start = new Date(end.getTime() - minutes * 60 * 1000)
    readWindow(slug, start, end, process).then(
      ({ entries, retentionDays }) => {
        if (!current) return
        seen.current = new Set(entries.map((e) => e.id))
        setLines(entries.slice(-MAX_LINES))
        setRetention(retentionDays)
        setError(null)
        setLoading(false)
      },
      (e) => {
        if (!current) return
        setError(messageOf(e))
        setLoading(false)
      },
    )
    return () => void (current = false)
  }, [slug, minutes, process])

  const [streamNote, setStreamNote] = useState<string | null>(null)
  const lastStamp = useRef<string | null>(null)
  lastStamp.current = lines.length ? lines[lines.length - 1].timestamp : null
  useEffect(() => {
    if (!follow || loading) return
    setStreamNote(null)
    // From the newest line shown (ids already shown are skipped), else the window's start.
    const start = lastStamp.current ?? new Date(Date.now() - minutes * 60 * 1000).toISOString()
    return followLogs(
      slug,
      { start, process },
      {
        onLine: (e) => {
          if (seen.current.has(e.id)) return
          seen.current.add(e.id)
          setLines((ls) => [...ls, e].slice(-MAX_LINES))
        },
        onStatus: setStreamNote,
        onEnd: (text) => {
          setStreamNote(text)
          setFollow(false)
        },
      },
    )
  }, [slug, follow, loading, minutes, process])

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight
  }, [lines, follow])

  return (
    <div class="panel">
      <div class="toolbar">
        <label for="log-window">Window</label>
        <select id="log-window" value={String(minutes)} onChange={(e) => setMinutes(Number(e.currentTarget.value))}>
          {windows.map(([label, m]) => (
            <option key={m} value={String(m)}>
              last {label}
            </option>
          ))}
        </select>
        <label for="log-process">Process</label>
        <input
          id="log-process"
          placeholder="all (or worker, web.2)"
          value={process}
          onChange={(e) => setProcess(e.currentTarget.value.trim())}
        />
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow
        </label>
        {retention !== null && <span class="muted small">kept {retention} day{retention === 1 ? '' : 's'} on your plan</span>}
      </div>
      <ErrorBox error={error} />
      {streamNote && (
        <p class="muted small" role="status" data-testid="stream-status">
          {streamNote}
        </p>
      )}
      {!loading && lines.length === 0 && !error ? (
        <Empty title="No log lines in this window">
          Widen the window, turn on Follow, or deploy: build and release output shows here too.
        </Empty>
      ) : (
        <pre class="log tall" ref={box} data-testid="logs" aria-label="Log lines" tabIndex={0}>
          {lines.map((l) => (
            <span key={l.id} class={`line s-${l.stream}`}>
              <span class="ts">{l.timestamp.slice(11, 23)}</span> <span class="stream">{l.process ?? l.stream}</span> {l.message}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
    </div>
  )
}
