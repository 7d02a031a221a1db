import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'

export function ErrorBox({ error }: { error: string | null | undefined }) {
  if (!error) return null
  return (
    <p class="error" role="alert">
      {error}
    </p>
  )
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{title}</strong>
      {children && <p>{children}</p>}
    </div>
  )
}

const tone: Record<string, string> = {
  running: 'ok',
  live: 'ok',
  active: 'ok',
  ready: 'ok',
  paid: 'ok',
  issued: 'ok',
  succeeded: 'ok',
  success: 'ok',
  deploying: 'busy',
  building: 'busy',
  releasing: 'busy',
  provisioning: 'busy',
  pending: 'busy',
  napping: 'idle',
  superseded: 'idle',
  cancelled: 'idle',
  error: 'bad',
  failed: 'bad',
  timed_out: 'bad',
  denied: 'bad',
  failing: 'bad',
  expired: 'idle',
  deleted: 'idle',
}

export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${tone[status] ?? 'idle'}`}>{status}</span>
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setDone(true)
      setTimeout(() => setDone(false), 2000)
    } catch {
      // No clipboard (an insecure origin): the text is selectable beside the button.
    }
  }
  return (
    <button type="button" class="secondary" onClick={copy}>
      {done ? 'Copied' : label}
    </button>
  )
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>
  const d = new Date(at)
  return <time dateTime={at} title={d.toISOString()}>{d.toLocaleString()}</time>
}

export function Loading() {
  return <p class="muted" aria-live="polite">Loading…</p>
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`
  return `${(n / 1024 ** 3).toFixed(1)} GB`
}

// shortId is an id's last 8 characters: ids are UUIDv7, whose first characters are a
// timestamp shared by everything made in the same minute.
export function shortId(id: string): string {
  return id.slice(-8)
}
