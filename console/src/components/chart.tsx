// A time-series chart drawn by uPlot (a small canvas chart library, ~20 KB gzip), loaded on
// first use as its own chunk so the console's first load stays as it was. The canvas says
// nothing to a screen reader: the figure carries a sentence of what it shows (summary).
import { useEffect, useRef, useState } from 'preact/hooks'
import type uPlot from 'uplot'
import { axisValue, formatValue, tint } from '../api/metrics'

export type ChartLine = {
  label: string
  values: (number | null)[]
  color: string
  // shown is what the legend and cursor say for a point, when not the drawn value (a stacked
  // band shows its own count, not the running total it is drawn at).
  shown?: (number | null)[]
  fill?: boolean
  dash?: boolean
}

let loading: Promise<typeof uPlot> | null = null
function loadUPlot(): Promise<typeof uPlot> {
  loading ??= import('./uplot').then((m) => m.default)
  return loading
}

const HEIGHT = 200

export function Chart({ title, unit, x, lines, summary }: { title: string; unit: string; x: number[]; lines: ChartLine[]; summary: string }) {
  const box = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    let plot: uPlot | null = null
    let gone = false
    let observer: ResizeObserver | null = null
    loadUPlot().then(
      (UPlot) => {
        const el = box.current
        if (gone || !el) return
        const opts: uPlot.Options = {
          width: Math.max(el.clientWidth, 200),
          height: HEIGHT,
          series: [
            {},
            ...lines.map((l) => ({
              label: l.label,
              stroke: l.color,
              width: 1.5,
              fill: l.fill ? tint(l.color, 0.55) : undefined,
              dash: l.dash ? [6, 4] : undefined,
              points: { show: false },
              value: (_u: uPlot, v: number | null, _si: number, i: number | null) =>
                formatValue(l.shown && i !== null ? l.shown[i] : v, unit),
            })),
          ],
          axes: [{}, { size: 80, values: (_u: uPlot, splits: number[]) => splits.map((v) => axisValue(v, unit)) }],
          scales: { y: { range: (_u: uPlot, min: number, max: number) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
        }
        plot = new UPlot(opts, [x, ...lines.map((l) => l.values)] as uPlot.AlignedData, el)
        observer = new ResizeObserver(() => plot?.setSize({ width: Math.max(el.clientWidth, 200), height: HEIGHT }))
        observer.observe(el)
      },
      () => setError('The chart could not load; reload the page.'),
    )
    return () => {
      gone = true
      observer?.disconnect()
      plot?.destroy()
    }
  }, [x, lines, unit])
  return (
    <figure class="chart">
      <figcaption>
        <strong>{title}</strong> <span class="muted small">{summary}</span>
      </figcaption>
      {error && <p class="error">{error}</p>}
      <div ref={box} class="chart-box" role="img" aria-label={`${title}: ${summary}`} />
    </figure>
  )
}
