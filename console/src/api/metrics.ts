// What the Metrics tab makes of GET /api/apps/{slug}/metrics before uPlot draws it: the
// windows it offers, series on one time axis, requests stacked by status class, labels and
// values in words. Pure (no DOM, no uPlot), so scripts/metrics.test.mjs runs it in Node.

// A series as the API answers it: labels and [unixSeconds, value | null] points.
export type SeriesLike = { labels: { status?: string; quantile?: string; process?: string; instance?: string }; points: (number | null)[][] }

// Windows the tab offers, each with a step that keeps a chart within a few hundred points
// (the API allows 1,440) and within what every plan keeps (a day at least).
export const windows = [
  { id: '1h', label: 'Last hour', seconds: 3600, step: 60 },
  { id: '6h', label: 'Last 6 hours', seconds: 6 * 3600, step: 60 },
  { id: '24h', label: 'Last 24 hours', seconds: 24 * 3600, step: 300 },
  { id: '7d', label: 'Last 7 days', seconds: 7 * 86400, step: 3600 },
  { id: '30d', label: 'Last 30 days', seconds: 30 * 86400, step: 3600 },
] as const

export type Window = (typeof windows)[number]

// windowQuery is the read of a window ending at now: start as RFC 3339, the window's step.
export function windowQuery(w: Window, now: Date): { start: string; step: Window['step'] } {
  return { start: new Date(now.getTime() - w.seconds * 1000).toISOString(), step: w.step }
}

// seriesLabel names a series in a word: 2xx, p95, web.1.
export function seriesLabel(l: SeriesLike['labels']): string {
  if (l.status) return l.status
  if (l.quantile) {
    const pct = Math.round(Number(l.quantile) * 1000) / 10
    return Number.isFinite(pct) ? `p${pct}` : l.quantile
  }
  return l.instance || l.process || 'all'
}

// columns puts every series on one time axis (the union of their times, ascending); a time
// a series has no point for is null, as the API's own null.
export function columns(series: SeriesLike[]): { x: number[]; ys: (number | null)[][] } {
  const times = new Set<number>()
  for (const s of series) for (const p of s.points) times.add(Number(p[0]))
  const x = [...times].sort((a, b) => a - b)
  const at = new Map(x.map((t, i) => [t, i]))
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array(x.length).fill(null)
    for (const p of s.points) y[at.get(Number(p[0]))!] = p[1] ?? null
    return y
  })
  return { x, ys }
}

const statusOrder = ['1xx', '2xx', '3xx', '4xx', '5xx']

// byStatus orders the requests' series 1xx to 5xx, the way they stack from the bottom.
export function byStatus<T extends SeriesLike>(series: T[]): T[] {
  const rank = (s: T) => {
    const i = statusOrder.indexOf(s.labels.status ?? '')
    return i < 0 ? statusOrder.length : i
  }
  return [...series].sort((a, b) => rank(a) - rank(b))
}

// stack turns counts into running totals, bottom first: what each band's top edge is. A
// missing count stacks as 0; a step where every count is missing stays missing.
export function stack(ys: (number | null)[][]): (number | null)[][] {
  const out: (number | null)[][] = []
  ys.forEach((y, i) =>
    out.push(
      y.map((v, j) => {
        const below = i > 0 ? out[i - 1][j] : null
        if (v === null && below === null) return null
        return (below ?? 0) + (v ?? 0)
      }),
    ),
  )
  return out
}

// formatValue writes a value in the metric's unit.
export function formatValue(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—'
  switch (unit) {
    case 'bytes': {
      const units = ['B', 'KiB', 'MiB', 'GiB']
      let n = v
      let i = 0
      while (n >= 1024 && i < units.length - 1) {
        n /= 1024
        i++
      }
      return i === 0 ? `${Math.round(n)} B` : `${n.toFixed(1)} ${units[i]}`
    }
    case 'ms':
      return v < 10 ? `${v.toFixed(2)} ms` : `${Math.round(v)} ms`
    case 'cores':
      return `${v.toFixed(3)} cores`
    default:
      return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit}`
  }
}

// axisValue is a value as an axis tick says it, short: the unit only where the number needs
// it (bytes' scale, milliseconds); counts and cores bare, their unit in the chart's title.
export function axisValue(v: number, unit: string): string {
  switch (unit) {
    case 'bytes':
      return formatValue(v, unit)
    case 'ms':
      return `${v < 10 && !Number.isInteger(v) ? v.toFixed(1) : Math.round(v)} ms`
    case 'cores':
      return v === 0 ? '0' : String(Number(v.toPrecision(2)))
    default:
      return Number.isInteger(v) ? String(v) : v.toFixed(1)
  }
}

// tint is a colour mixed with white (amount 0: white, 1: the colour), opaque: a stacked
// band paints over the band above it, so see-through fills would blend into one colour.
export function tint(hex: string, amount: number): string {
  const n = parseInt(hex.slice(1), 16)
  const mix = (c: number) => Math.round(255 - (255 - c) * amount)
  return `rgb(${mix(n >> 16)}, ${mix((n >> 8) & 255)}, ${mix(n & 255)})`
}

// total sums a series' values (missing ones count nothing): the chart's text alternative.
export function total(y: (number | null)[]): number {
  return y.reduce<number>((sum, v) => sum + (v ?? 0), 0)
}

// peak is a series' largest value, or null when it has none.
export function peak(y: (number | null)[]): number | null {
  let m: number | null = null
  for (const v of y) if (v !== null && (m === null || v > m)) m = v
  return m
}
