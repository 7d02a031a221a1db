import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { MetricName, Metrics } from '../../api/types'
import { byStatus, columns, formatValue, peak, seriesLabel, stack, total, windowQuery, windows, type SeriesLike, type Window } from '../../api/metrics'
import { useInterval, useLoad } from '../../hooks'
import { Chart, type ChartLine } from '../../components/chart'
import { Empty, ErrorBox, Loading } from '../../components/ui'

const statusColor: Record<string, string> = { '1xx': '#8a8f98', '2xx': '#2f9e44', '3xx': '#1c7ed6', '4xx': '#f08c00', '5xx': '#e03131' }
const quantileColor: Record<string, string> = { p50: '#1c7ed6', p95: '#f08c00', p99: '#e03131' }
const palette = ['#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#e03131', '#5c940d', '#862e9c']

const stepWord = (step: number) => (step === 60 ? 'minute' : step === 300 ? '5 minutes' : 'hour')

type Prepared = { title: string; unit: string; x: number[]; lines: ChartLine[]; summary: string; empty: boolean }

// An answer as prepare reads it: points as plain arrays, whether the client's types keep the
// document's [time, value] tuples or not.
type MetricsAnswer = Omit<Metrics, 'series'> & { series: SeriesLike[] }

// prepare turns one metric's answer into what its chart draws and says.
function prepare(m: MetricsAnswer): Prepared {
  const unit = m.unit
  if (m.metric === 'requests') {
    const series = byStatus(m.series)
    const { x, ys } = columns(series)
    const tops = stack(ys)
    // The top band first, so each lower band paints over the one above it: stacked areas.
    const lines = series
      .map((s, i) => ({ label: seriesLabel(s.labels), values: tops[i], shown: ys[i], color: statusColor[s.labels.status ?? ''] ?? palette[i % palette.length], fill: true }))
      .reverse()
    const parts = series.map((s, i) => `${seriesLabel(s.labels)} ${total(ys[i])}`)
    const all = ys.reduce((n, y) => n + total(y), 0)
    return { title: `Requests per ${stepWord(m.step)} by status`, unit, x, lines, summary: `${all} requests${parts.length ? ': ' + parts.join(', ') : ''}`, empty: all === 0 }
  }
  const { x, ys } = columns(m.series)
  const lines: ChartLine[] = m.series.map((s, i) => {
    const label = seriesLabel(s.labels)
    return { label, values: ys[i], color: quantileColor[label] ?? palette[i % palette.length] }
  })
  const peaks = m.series.map((s, i) => `${seriesLabel(s.labels)} up to ${formatValue(peak(ys[i]), unit)}`)
  const empty = ys.every((y) => peak(y) === null)
  let summary = peaks.join(', ')
  if (m.metric === 'memory' && typeof m.limit === 'number') {
    lines.push({ label: 'limit', values: x.map(() => m.limit as number), color: '#868e96', dash: true })
    summary += `${summary ? '; ' : ''}limit ${formatValue(m.limit, unit)}`
  }
  const title = { latency: 'Latency (p50, p95, p99)', cpu: 'CPU (cores)', memory: 'Memory', instances: 'Instances' }[m.metric as string] ?? m.metric
  return { title, unit, x, lines, summary: summary || 'no data', empty }
}

const shown: Record<string, MetricName[]> = { service: ['requests', 'latency', 'cpu', 'memory'], static: ['requests', 'latency'] }

// Metrics charts the app's requests (stacked by status class), latency quantiles and, for a
// service, each instance's CPU and memory with its limit, over a chosen window; the charts
// follow along every minute.
export function MetricsTab({ slug, kind }: { slug: string; kind: string }) {
  const [win, setWin] = useState<Window>(windows[0])
  const names = shown[kind] ?? shown.service
  const charts = useLoad(async () => {
    const q = windowQuery(win, new Date())
    const answers = await Promise.all(
      names.map((metric) => ok(api().GET('/api/apps/{slug}/metrics', { params: { path: { slug }, query: { metric, start: q.start, step: q.step } } }))),
    )
    return answers.map(prepare)
  }, [slug, win.id, kind])
  useInterval(charts.reload, 60_000, true)
  return (
    <div class="stack">
      <div class="panel">
        <div class="row">
          <label for="metrics-window">Window</label>
          <select id="metrics-window" value={win.id} onChange={(e) => setWin(windows.find((w) => w.id === e.currentTarget.value) ?? windows[0])}>
            {windows.map((w) => (
              <option key={w.id} value={w.id}>
                {w.label}
              </option>
            ))}
          </select>
          <span class="muted small">
            One point per {stepWord(win.step)}; your plan keeps metrics 1 to 30 days.
          </span>
        </div>
      </div>
      <ErrorBox error={charts.error} />
      {charts.loading && !charts.data && <Loading />}
      {charts.data?.map((c) => (
        <div class="panel" key={c.title} data-testid="metric-chart">
          {c.empty ? (
            <Empty title={c.title}>Nothing in this window yet: requests and samples arrive within a minute or so.</Empty>
          ) : (
            <Chart title={c.title} unit={c.unit} x={c.x} lines={c.lines} summary={c.summary} />
          )}
        </div>
      ))}
    </div>
  )
}
