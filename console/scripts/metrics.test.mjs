// Table tests of what the Metrics tab and the Drains section make of the API's answers
// (src/api/metrics.ts, src/api/drains.ts), run by `npm test` and by the console module's
// `go test` (rules_test.go). The TypeScript is transpiled with the project's own compiler.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'node_modules', '.cache', 'metrics-test')
mkdirSync(out, { recursive: true })
const load = async (name) => {
  const src = readFileSync(join(root, 'src', 'api', `${name}.ts`), 'utf8')
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
  writeFileSync(join(out, `${name}.mjs`), js)
  return import(pathToFileURL(join(out, `${name}.mjs`)).href)
}
const m = await load('metrics')
const { drainURLProblem } = await load('drains')

test('series labels', () => {
  for (const [labels, want] of [
    [{ status: '2xx' }, '2xx'],
    [{ quantile: '0.5' }, 'p50'],
    [{ quantile: '0.95' }, 'p95'],
    [{ quantile: '0.99' }, 'p99'],
    [{ quantile: '0.999' }, 'p99.9'],
    [{ process: 'web', instance: 'web.1' }, 'web.1'],
    [{ process: 'web' }, 'web'],
    [{}, 'all'],
  ]) {
    assert.equal(m.seriesLabel(labels), want, JSON.stringify(labels))
  }
})

test('columns put every series on one time axis, null where a series has no point', () => {
  const got = m.columns([
    { labels: { instance: 'web.1' }, points: [[120, 1], [60, 2]] },
    { labels: { instance: 'web.2' }, points: [[180, 5], [60, null]] },
  ])
  assert.deepEqual(got, { x: [60, 120, 180], ys: [[2, 1, null], [null, null, 5]] })
  assert.deepEqual(m.columns([]), { x: [], ys: [] })
})

test('requests stack 1xx to 5xx, missing counts as 0 unless the whole step is missing', () => {
  const series = m.byStatus([
    { labels: { status: '5xx' }, points: [] },
    { labels: { status: '2xx' }, points: [] },
    { labels: { status: '4xx' }, points: [] },
  ])
  assert.deepEqual(series.map((s) => s.labels.status), ['2xx', '4xx', '5xx'])
  assert.deepEqual(
    m.stack([
      [10, 0, null, null],
      [1, null, 3, null],
      [2, 2, null, null],
    ]),
    [
      [10, 0, null, null],
      [11, 0, 3, null],
      [13, 2, 3, null],
    ],
  )
})

test('values in their units', () => {
  for (const [v, unit, want] of [
    [512, 'bytes', '512 B'],
    [2048, 'bytes', '2.0 KiB'],
    [52428800, 'bytes', '50.0 MiB'],
    [3 * 2 ** 30, 'bytes', '3.0 GiB'],
    [4.25, 'ms', '4.25 ms'],
    [180.4, 'ms', '180 ms'],
    [0.125, 'cores', '0.125 cores'],
    [3, 'requests', '3 requests'],
    [2.5, 'instances', '2.5 instances'],
    [null, 'ms', '—'],
  ]) {
    assert.equal(m.formatValue(v, unit), want, `${v} ${unit}`)
  }
})

test('totals and peaks skip missing values', () => {
  assert.equal(m.total([1, null, 2]), 3)
  assert.equal(m.peak([null, 3, 7, null, 2]), 7)
  assert.equal(m.peak([null, null]), null)
})

test('windows: a step the API allows, at most 1,440 points, start before now', () => {
  const now = new Date('2026-11-29T12:00:00Z')
  for (const w of m.windows) {
    assert.ok([60, 300, 3600].includes(w.step), w.id)
    assert.ok(w.seconds / w.step <= 1440, w.id)
  }
  assert.deepEqual(m.windowQuery(m.windows[0], now), { start: '2026-11-29T11:00:00.000Z', step: 60 })
})

test('drain URLs checked before they are sent', () => {
  assert.equal(drainURLProblem('https://collector.example.com/tori'), null)
  assert.equal(drainURLProblem('syslog+tls://logs.example.com:6514'), null)
  assert.match(drainURLProblem('http://collector.example.com/'), /TLS only/)
  assert.match(drainURLProblem('syslog://logs.example.com:514'), /TLS only/)
  assert.match(drainURLProblem('ftp://x.example.com/'), /https:\/\/ or syslog\+tls:\/\//)
  assert.match(drainURLProblem('collector'), /Not a URL/)
})

test('axis ticks are short', () => {
  for (const [v, unit, want] of [
    [150, 'requests', '150'],
    [2.5, 'requests', '2.5'],
    [0.15, 'cores', '0.15'],
    [0, 'cores', '0'],
    [0.5, 'ms', '0.5 ms'],
    [50, 'ms', '50 ms'],
    [100000000, 'bytes', '95.4 MiB'],
  ]) {
    assert.equal(m.axisValue(v, unit), want, `${v} ${unit}`)
  }
})

test('tints are opaque mixes with white', () => {
  assert.equal(m.tint('#2f9e44', 1), 'rgb(47, 158, 68)')
  assert.equal(m.tint('#2f9e44', 0), 'rgb(255, 255, 255)')
  assert.equal(m.tint('#000000', 0.5), 'rgb(128, 128, 128)')
})
