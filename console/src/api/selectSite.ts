// Which of a dropped or chosen folder's files a deploy sends: the rules `tori deploy` follows
// (cli/README.md, "What a folder deploy sends"), so a folder gives the same site (or service
// source) from the browser as from the command line. Patterns are gitignore syntax,
// matched by the `ignore` package. The drop loads this module when a folder arrives, so the
// first page load does not carry it.
import ignore, { type Ignore } from 'ignore'
import { NEVER_ENTERED } from './neverEntered'
import type { SiteFile } from './upload'

export type LeftOut = { path: string; reason: string }
export type SiteSelection = { files: SiteFile[]; leftOut: LeftOut[] }
export type AppKind = 'static' | 'service'

const WELL_KNOWN = '.well-known'

// neverSent: version control and Finder droppings; for a static site also its tori.json and
// every dot path but a top-level .well-known (the edge answers those 404 whatever a revision
// holds). A service's source keeps its dotfiles and tori.json (its build reads them).
function neverSent(segs: string[], kind: AppKind): boolean {
  const name = segs[segs.length - 1]
  if (NEVER_ENTERED.has(name) || name === '.DS_Store') return true
  if (kind === 'service') return false
  if (segs.length === 1 && name === 'tori.json') return true
  return segs.some((s, i) => s.startsWith('.') && !(i === 0 && s === WELL_KNOWN))
}

// leftOutByDefault: .env and its kin, and a static site's node_modules, unless a .toriignore
// `!` keeps them.
function leftOutByDefault(segs: string[], kind: AppKind): boolean {
  const name = segs[segs.length - 1]
  return name.startsWith('.env') || (kind === 'static' && name === 'node_modules')
}

// IgnoreFiles are one kind of ignore file found in the folder, each applying below its own
// folder; a deeper file decides before a shallower one, as in git.
class IgnoreFiles {
  private byDir = new Map<string, Ignore>() // '' is the top

  add(dir: string, text: string) {
    // Case-sensitive, as git is on Linux and as `tori deploy` matches.
    this.byDir.set(dir, ignore({ ignorecase: false }).add(text))
  }

  // test is the deepest verdict on path ('a/b', or 'a/b/' for a folder): 'out', 'in' when a
  // `!pattern` matched it, or null.
  test(path: string): 'out' | 'in' | null {
    const segs = path.replace(/\/$/, '').split('/')
    for (let depth = segs.length - 1; depth >= 0; depth--) {
      const dir = segs.slice(0, depth).join('/')
      const ig = this.byDir.get(dir)
      if (!ig) continue
      const r = ig.test(depth === 0 ? path : path.slice(dir.length + 1))
      if (r.ignored) return 'out'
      if (r.unignored) return 'in'
    }
    return null
  }
}

// selectSite applies the rules to files (paths relative to the site's top); notEntered are
// folders the walk skipped (NEVER_ENTERED), listed as left out.
export async function selectSite(files: SiteFile[], notEntered: string[] = [], kind: AppKind = 'static'): Promise<SiteSelection> {
  const git = new IgnoreFiles()
  const tori = new IgnoreFiles()
  for (const f of files) {
    const segs = f.path.split('/')
    const name = segs[segs.length - 1]
    if (name !== '.gitignore' && name !== '.toriignore') continue
    // An ignore file inside a folder that is never sent has no say.
    if (segs.slice(0, -1).some((s) => NEVER_ENTERED.has(s))) continue
    ;(name === '.gitignore' ? git : tori).add(segs.slice(0, -1).join('/'), await f.file.text())
  }

  // A folder's verdict: null when it is sent, else why not; `kept` when a .toriignore `!`
  // kept it, which keeps everything below it that no .toriignore pattern leaves out.
  type Verdict = { reason: string | null; kept: boolean }
  const folders = new Map<string, Verdict>()
  const decide = (segs: string[], isDir: boolean, keptAbove: boolean): Verdict => {
    const path = segs.join('/') + (isDir ? '/' : '')
    if (neverSent(segs, kind)) return { reason: 'default', kept: false }
    const t = tori.test(path)
    if (t === 'out') return { reason: '.toriignore', kept: false }
    if (t === 'in' || keptAbove) return { reason: null, kept: true }
    if (leftOutByDefault(segs, kind)) return { reason: 'default', kept: false }
    if (git.test(path) === 'out') return { reason: '.gitignore', kept: false }
    return { reason: null, kept: false }
  }

  const sent: SiteFile[] = []
  const leftOut = new Map<string, string>(notEntered.map((d) => [d.replace(/\/?$/, '/'), 'default']))
  for (const f of files) {
    const segs = f.path.split('/')
    let kept = false
    let outAt: [string, string] | null = null
    for (let i = 1; i < segs.length && !outAt; i++) {
      const dir = segs.slice(0, i).join('/')
      let v = folders.get(dir)
      if (!v) {
        v = decide(segs.slice(0, i), true, kept)
        folders.set(dir, v)
      }
      if (v.reason) outAt = [dir + '/', v.reason]
      kept = v.kept
    }
    if (!outAt) {
      const v = decide(segs, false, kept)
      if (v.reason) outAt = [f.path, v.reason]
    }
    if (outAt) leftOut.set(outAt[0], outAt[1])
    else sent.push(f)
  }
  return {
    files: sent,
    leftOut: Array.from(leftOut, ([path, reason]) => ({ path, reason })).sort((a, b) => (a.path < b.path ? -1 : 1)),
  }
}
