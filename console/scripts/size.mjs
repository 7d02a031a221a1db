// Prints the JavaScript of the first load (what index.html loads, and what that imports
// statically), raw and compressed, and fails the build over the 200 KB budget (gzip).
import { readFileSync, writeFileSync } from 'node:fs'
import { gzipSync, brotliCompressSync } from 'node:zlib'
import { join } from 'node:path'

const dist = new URL('../dist/', import.meta.url).pathname
const budget = 200 * 1024
const html = readFileSync(join(dist, 'index.html'), 'utf8')
const queue = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1])
const seen = new Set()
let raw = 0, gz = 0, br = 0
while (queue.length) {
  const file = queue.shift()
  if (seen.has(file)) continue
  seen.add(file)
  const code = readFileSync(join(dist, file))
  raw += code.length
  gz += gzipSync(code, { level: 9 }).length
  br += brotliCompressSync(code).length
  // Static imports of other chunks load with the entry; dynamic import() does not.
  for (const m of code.toString().matchAll(/(?:^|[;\n}])\s*import\s*(?:[^'"()]*?from\s*)?["']\.\/([^"']+\.js)["']/g)) {
    queue.push('assets/' + m[1])
  }
}
const kb = (n) => (n / 1024).toFixed(1) + ' KB'
console.log(`first-load JavaScript: ${seen.size} file(s), ${kb(raw)} raw, ${kb(gz)} gzip, ${kb(br)} brotli (budget ${kb(budget)} gzip)`)
// dist/ is emptied by every build; its placeholder keeps the Go embed working in a fresh clone.
writeFileSync(join(dist, '.gitkeep'), '')
if (gz > budget) {
  console.error('FAILED: the first load is over its JavaScript budget')
  process.exit(1)
}
