import { useRef, useState } from 'preact/hooks'
import { filesFromDrop, filesFromInput, uploadSite, type SiteFile } from '../../api/upload'
import type { Deploy } from '../../api/types'
import { useAction } from '../../hooks'
import { bytes, ErrorBox } from '../../components/ui'

// DropFolder deploys a static site: drop its folder (or choose it), see the upload's progress.
export function DropFolder({ slug, onDeployed }: { slug: string; onDeployed: (d: Deploy) => void }) {
  const [over, setOver] = useState(false)
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null)
  const [picked, setPicked] = useState<SiteFile[] | null>(null)
  const { busy, error, run } = useAction()
  const input = useRef<HTMLInputElement>(null)

  const deploy = (files: SiteFile[]) =>
    run(async () => {
      if (files.length === 0) throw new Error('The folder is empty: nothing to deploy.')
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
        deploy(await filesFromDrop(e.dataTransfer))
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
    </div>
  )
}
