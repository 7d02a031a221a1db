// Table tests of the folder drop's rules (src/api/selectSite.ts), run by `npm test` and by
// the console module's `go test` (rules_test.go). The TypeScript is transpiled with the
// project's own compiler into node_modules/.cache, next to the `ignore` package it imports.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'node_modules', '.cache', 'select-site-test')
mkdirSync(out, { recursive: true })
for (const name of ['selectSite', 'neverEntered']) {
  const src = readFileSync(join(root, 'src', 'api', `${name}.ts`), 'utf8')
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
  writeFileSync(join(out, `${name}.mjs`), js.replace(/from '\.\/(\w+)'/g, "from './$1.mjs'"))
}
const { selectSite } = await import(pathToFileURL(join(out, 'selectSite.mjs')).href)

const folder = (files) => Object.entries(files).map(([path, body]) => ({ path, file: new File([body], path.split('/').pop()) }))
const select = async (files, notEntered, kind) => {
  const sel = await selectSite(folder(files), notEntered, kind)
  return { files: sel.files.map((f) => f.path).sort(), leftOut: sel.leftOut.map((l) => `${l.path} ${l.reason}`) }
}

// The folder of `tori deploy`'s TestSelectStaticSite (cli/internal/bundle/selection_test.go),
// but its .dockerignore, which only the command line reads: the same site from both.
const project = {
  'index.html': 'home',
  'tori.json': '{"app":"x"}',
  'assets/app.js': 'x()',
  'assets/app.js.map': '{}',
  'debug.log': 'log',
  'dist/bundle.js': 'built',
  'sub/.gitignore': '*.tmp\n',
  'sub/a.tmp': 'tmp',
  'b.tmp': "kept: the nested .gitignore is sub/'s alone",
  'sub/keep.txt': 'k',
  '.gitignore': '# build output\r\n/dist/\n*.log\n*.map\n!.env\n',
  '.git/config': '[core]',
  '.env': 'SECRET=1',
  '.env.production': 'SECRET=2',
  '.envrc': 'export A=1',
  '.htaccess': 'deny',
  '.well-known/security.txt': 'Contact: x',
  '.well-known/.hidden': 'no',
  'blog/.DS_Store': 'x',
  'blog/post.html': 'post',
  'node_modules/lib/i.js': 'lib',
  'Docs/Guide.md': 'guide',
}

test('a static site sends what tori deploy sends', async () => {
  assert.deepEqual(await select(project), {
    files: ['.well-known/security.txt', 'Docs/Guide.md', 'assets/app.js', 'b.tmp', 'blog/post.html', 'index.html', 'sub/keep.txt'],
    leftOut: [
      '.env default', '.env.production default', '.envrc default', '.git/ default', '.gitignore default', '.htaccess default',
      '.well-known/.hidden default', 'assets/app.js.map .gitignore', 'blog/.DS_Store default', 'debug.log .gitignore',
      'dist/ .gitignore', 'node_modules/ default', 'sub/.gitignore default', 'sub/a.tmp .gitignore', 'tori.json default',
    ],
  })
})

// It brings back defaults and .gitignore'd folders, leaves out more, and cannot bring back
// .git or a dotfile the edge would not serve. Patterns are case-sensitive, as in git.
test('a .toriignore has the last word on what is not fixed', async () => {
  const files = {
    ...project,
    '.gitignore': project['.gitignore'] + 'docs/\n',
    '.toriignore': '!node_modules/\n!dist/\n!.env.production\n!.git/\n!.htaccess\nblog/\n*.MD\n',
    'sub/.toriignore': 'keep.txt\n',
  }
  assert.deepEqual(await select(files), {
    files: ['.well-known/security.txt', 'Docs/Guide.md', 'assets/app.js', 'b.tmp', 'dist/bundle.js', 'index.html', 'node_modules/lib/i.js'],
    leftOut: [
      '.env default', '.env.production default', '.envrc default', '.git/ default', '.gitignore default', '.htaccess default',
      '.toriignore default', '.well-known/.hidden default', 'assets/app.js.map .gitignore',
      'blog/ .toriignore', 'debug.log .gitignore', 'sub/.gitignore default', 'sub/.toriignore default',
      'sub/a.tmp .gitignore', 'sub/keep.txt .toriignore', 'tori.json default',
    ],
  })
})

test('folders a drop did not enter are listed; an ignore file in one has no say', async () => {
  assert.deepEqual(await select({ 'index.html': 'x', '.hg/.gitignore': '*.html\n' }, ['.git', 'sub/.svn']), {
    files: ['index.html'],
    leftOut: ['.git/ default', '.hg/ default', 'sub/.svn/ default'],
  })
})

test('a folder of nothing to send sends nothing', async () => {
  assert.deepEqual(await select({ '.env': 'S=1', 'node_modules/a.js': 'a' }), { files: [], leftOut: ['.env default', 'node_modules/ default'] })
})

// `tori deploy`'s TestSelectServiceSource without its .dockerignore: a service's source keeps
// its dotfiles, tori.json and node_modules (its build decides), never .git or .env*.
test('a service source sends what tori deploy sends', async () => {
  assert.deepEqual(await select(project, [], 'service'), {
    files: [
      '.gitignore', '.htaccess', '.well-known/.hidden', '.well-known/security.txt', 'Docs/Guide.md', 'assets/app.js', 'b.tmp',
      'blog/post.html', 'index.html', 'node_modules/lib/i.js', 'sub/.gitignore', 'sub/keep.txt', 'tori.json',
    ],
    leftOut: [
      '.env default', '.env.production default', '.envrc default', '.git/ default', 'assets/app.js.map .gitignore',
      'blog/.DS_Store default', 'debug.log .gitignore', 'dist/ .gitignore', 'sub/a.tmp .gitignore',
    ],
  })
})
