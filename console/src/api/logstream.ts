import { handleUnauthorized } from './client'
import { ApiError, retryAfterOf } from './errors'
import type { LogEntry } from './types'

// The live log stream (GET /api/apps/{slug}/logs/stream, Server-Sent Events) read with fetch
// through the console's server, which forwards it unbuffered with the session's token.
// fetch rather than EventSource: a 401 must sign the page out, refusals must show in the
// API's words, and the final `close` event decides whether reconnecting makes sense.

export type StreamHandlers = {
  onLine: (e: LogEntry) => void
  // onStatus reports an interruption (a sentence) or recovery (null).
  onStatus?: (text: string | null) => void
  // onEnd is called once when the stream ends for good: the app deleted, the token revoked,
  // `end` reached or a refusal a retry cannot change.
  onEnd?: (text: string) => void
}

type SSEEvent = { id?: string; event?: string; data: string }

// parseEvent reads one event's lines (without the blank line that ended it); null for a
// comment (the heartbeat) or a bare `retry:`.
export function parseEvent(raw: string): SSEEvent | null {
  const ev: SSEEvent = { data: '' }
  const data: string[] = []
  for (const line of raw.split('\n')) {
    if (line === '' || line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'id') ev.id = value
    else if (field === 'event') ev.event = value
    else if (field === 'data') data.push(value)
  }
  if (data.length === 0) return null
  ev.data = data.join('\n')
  return ev
}

const finalReasons = new Set(['app_deleted', 'token_revoked', 'token_expired', 'end_reached'])
const permanentStatus = new Set([400, 403, 404, 410])
const MIN_BACKOFF = 500
const MAX_BACKOFF = 15_000

// followLogs follows slug's lines from query.start on, reconnecting with backoff (doubling
// from 0.5 s to 15 s, back to 0.5 s once events arrive) and resuming with Last-Event-ID, so
// each line reaches onLine once. It returns the function that stops it.
export function followLogs(slug: string, query: { start?: string; end?: string; process?: string }, h: StreamHandlers): () => void {
  let stopped = false
  let lastId = ''
  let backoff = MIN_BACKOFF
  const abort = new AbortController()
  const q = new URLSearchParams()
  if (query.start) q.set('start', query.start)
  if (query.end) q.set('end', query.end)
  if (query.process) q.set('process', query.process)
  const url = `/api/apps/${encodeURIComponent(slug)}/logs/stream${q.toString() ? '?' + q.toString() : ''}`
  const end = (text: string) => {
    stopped = true
    h.onEnd?.(text)
  }

  // readOnce reads one connection; it reports whether any event came.
  const readOnce = async (): Promise<boolean> => {
    const headers: Record<string, string> = { Accept: 'text/event-stream' }
    if (lastId) headers['Last-Event-ID'] = lastId
    const res = await fetch(url, { headers, signal: abort.signal, credentials: 'same-origin', cache: 'no-store' })
    if (!res.ok) {
      const body = await res.json().catch(() => undefined)
      const err = new ApiError(res.status, body, retryAfterOf(res, body))
      if (res.status === 401) {
        stopped = true
        handleUnauthorized()
      } else if (permanentStatus.has(res.status)) {
        end(err.message)
      } else {
        h.onStatus?.(`Live logs paused (${err.message}); reconnecting…`)
      }
      return false
    }
    h.onStatus?.(null)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buf = ''
    let got = false
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return got
      buf += value.replace(/\r\n?/g, '\n')
      let i: number
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = parseEvent(buf.slice(0, i))
        buf = buf.slice(i + 2)
        if (!ev) continue
        got = true
        if (ev.event === 'close') {
          const c = JSON.parse(ev.data) as { reason: string; message: string }
          if (finalReasons.has(c.reason)) end(c.message)
          void reader.cancel()
          return got
        }
        if (ev.event && ev.event !== 'message') continue
        if (ev.id) lastId = ev.id
        h.onLine(JSON.parse(ev.data) as LogEntry)
      }
    }
  }

  void (async () => {
    while (!stopped) {
      let got = false
      try {
        got = await readOnce()
      } catch {
        if (stopped) return
        h.onStatus?.('Live logs interrupted; reconnecting…')
      }
      if (stopped) return
      if (got) backoff = MIN_BACKOFF
      await new Promise((r) => setTimeout(r, backoff))
      backoff = Math.min(backoff * 2, MAX_BACKOFF)
    }
  })()
  return () => {
    stopped = true
    abort.abort()
  }
}
