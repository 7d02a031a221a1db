import { useRef, useState } from 'preact/hooks'
import { filesFromDrop, filesFromInput, uploadSite, type SiteFile } from '../../api/upload'
import type { LeftOut } from '../../api/selectSite'
import type { Deploy } from '../../api/types'
import { useAction } from '../../hooks'
import { bytes, ErrorBox } from '../../components/ui'

// DropFolder deploys a static site: drop its folder (or choose it), see the upload's progress.
export function DropFolder({ slug, onDeployed }: { slug: string; onDeployed: (d: Deploy) => void }) {
  const [over, setOver] = useState(false)
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null)
  const [picked, setPicked] = useState<SiteFile[] | null>(null)
  const [leftOut, setLeftOut] = useState<LeftOut[]>([])
  const { busy, error, run } = useAction()
  const input = useRef<HTMLInputElement>(null)

  const deploy = (all: SiteFile[], notEntered: string[] = []) =>
    run(async () => {
      if (all.length === 0) throw new Error('The folder is empty: nothing to deploy.')
      const { selectSite } = await import('../../api/selectSite')
      const { files, leftOut } = await selectSite(all, notEntered)
      setLeftOut(leftOut)
      if (files.length === 0) throw new Error('Nothing to deploy: every file of the folder is left out (see below).')
      setPicked(files)
      setProgress({ sent: 0, total: files.reduce((n, f) => n + f.file.size, 0) })
      try {
        const d = await uploadSite(slug, files, (sent, total) => setProgress({ sent, total }))
        onDeployed(d)
      } finally {
        setProgress(null)
        if (input.current) input.current.value = ''
      }
    })

  const pct = progress && progress.total > 0 ? Math.min(100, Math.round((progress.sent / progress.total) * 100)) : 0
  return (
    <div
      class={`panel drop ${over ? 'drop-over' : ''}`}
      data-testid="drop-zone"
      onDragOver={(e) => {
        e.preventDefault()
        setOver(true)
      }}
      onDragLeave={() => setOver(false)}
      onDrop={async (e) => {
        e.preventDefault()
        setOver(false)
        if (busy || !e.dataTransfer) return
        const { files, notEntered } = await filesFromDrop(e.dataTransfer)
        deploy(files, notEntered)
      }}
    >
      <h2>Deploy a folder</h2>
      {/* Before its label's paragraph, so focusing it (Tab) outlines the label. */}
      <input
        ref={input}
        id="folder-input"
        class="visually-hidden-focusable"
        type="file"
        // @ts-expect-error webkitdirectory is not in Preact's attribute types
        webkitdirectory={true}
        multiple
        disabled={busy}
        onChange={(e) => {
          const list = e.currentTarget.files
          if (list && list.length) deploy(filesFromInput(list))
        }}
      />
      <p>
        Drop your site's folder here (its <code>index.html</code> at the top), or{' '}
        <label for="folder-input" class="link-label">
          choose a folder
        </label>
        .
      </p>
      {progress && (
        <div class="progress-wrap" aria-live="polite">
          <progress max={100} value={pct} aria-label="Upload progress" />
          <span class="small">
            Uploading {picked?.length} file{picked?.length === 1 ? '' : 's'}: {bytes(progress.sent)} of {bytes(progress.total)} ({pct} %)
          </span>
        </div>
      )}
      <ErrorBox error={error} />
      {leftOut.length > 0 && <LeftOutNote leftOut={leftOut} kind="static" />}
    </div>
  )
}

// LeftOutNote says what the last folder's deploy did not send, and why: a site publishes
// neither its secrets nor its repository.
export function LeftOutNote({ leftOut, kind }: { leftOut: LeftOut[]; kind: 'static' | 'service' }) {
  return (
    <details class="small" data-testid="left-out">
      <summary>
        Left out {leftOut.length} path{leftOut.length === 1 ? '' : 's'}: {leftOut.slice(0, 4).map((l) => l.path).join(', ')}
        {leftOut.length > 4 ? ', …' : ''}
      </summary>
      {kind === 'static' ? (
        <p class="muted">
          Dotfiles (but <code>.well-known/</code>), <code>.env*</code>, <code>.git/</code>, <code>node_modules/</code> and{' '}
          <code>tori.json</code> are not published, nor what <code>.gitignore</code> or <code>.toriignore</code> lists; a{' '}
          <code>!pattern</code> in <code>.toriignore</code> keeps a file.
        </p>
      ) : (
        <p class="muted">
          <code>.env*</code> and <code>.git/</code> are not sent (variables belong in the Environment tab), nor what{' '}
          <code>.gitignore</code> or <code>.toriignore</code> lists; a <code>!pattern</code> in <code>.toriignore</code> keeps a file.
        </p>
      )}
      <ul>
        {leftOut.map((l) => (
          <li key={l.path}>
            <code>{l.path}</code> <span class="muted">({l.reason})</span>
          </li>
        ))}
      </ul>
    </details>
  )
}
