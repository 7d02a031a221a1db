import { useRef, useState } from 'preact/hooks'
import { filesFromInput, uploadSource } from '../../api/upload'
import type { LeftOut } from '../../api/selectSite'
import type { Deploy } from '../../api/types'
import { useAction } from '../../hooks'
import { bytes, ErrorBox } from '../../components/ui'
import { LeftOutNote } from './drop'

// SourceDeploy deploys a service from its source: a chosen folder (packed here into the
// .tar.gz `tori deploy` would send, by the same rules) or a .tar.gz made elsewhere, with an
// optional release command.
export function SourceDeploy({ slug, onDeployed }: { slug: string; onDeployed: (d: Deploy) => void }) {
  const [release, setRelease] = useState('')
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null)
  const [leftOut, setLeftOut] = useState<LeftOut[]>([])
  const [packing, setPacking] = useState(false)
  const { busy, error, run } = useAction()
  const folder = useRef<HTMLInputElement>(null)
  const tarball = useRef<HTMLInputElement>(null)

  const send = (make: () => Promise<Blob>) =>
    run(async () => {
      try {
        setPacking(true)
        const blob = await make()
        setPacking(false)
        setProgress({ sent: 0, total: blob.size })
        onDeployed(await uploadSource(slug, blob, release, (sent, total) => setProgress({ sent, total })))
      } finally {
        setPacking(false)
        setProgress(null)
        if (folder.current) folder.current.value = ''
        if (tarball.current) tarball.current.value = ''
      }
    })

  const fromFolder = (list: FileList) =>
    send(async () => {
      const [{ selectSite }, { packSource }] = await Promise.all([import('../../api/selectSite'), import('../../api/pack')])
      const { files, leftOut } = await selectSite(filesFromInput(list), [], 'service')
      setLeftOut(leftOut)
      return packSource(files)
    })

  const fromTarball = (file: File) =>
    send(async () => {
      setLeftOut([])
      if (!/\.(tar\.gz|tgz)$/i.test(file.name)) throw new Error(`${file.name} is not a .tar.gz: choose the source tarball, or its folder.`)
      return file
    })

  const pct = progress && progress.total > 0 ? Math.min(100, Math.round((progress.sent / progress.total) * 100)) : 0
  return (
    <div class="panel" data-testid="source-deploy">
      <h2>Deploy from source</h2>
      <p>
        Choose the service's folder (its <code>tori.json</code> at the top; sent by the rules <code>tori deploy</code>{' '}
        follows) or a <code>.tar.gz</code> of it. Its build runs on Tori; an image deploys with{' '}
        <code>tori deploy --app {slug} --image REGISTRY/REPO@sha256:…</code>.
      </p>
      <div class="field">
        <label for="release-command">Release command (optional: runs before traffic moves)</label>
        <input
          id="release-command"
          autocomplete="off"
          spellcheck={false}
          placeholder="node migrate.js"
          value={release}
          disabled={busy}
          onInput={(e) => setRelease(e.currentTarget.value)}
        />
      </div>
      <input
        ref={folder}
        id="source-folder"
        class="visually-hidden-focusable"
        type="file"
        // @ts-expect-error webkitdirectory is not in Preact's attribute types
        webkitdirectory={true}
        multiple
        disabled={busy}
        onChange={(e) => {
          const list = e.currentTarget.files
          if (list && list.length) fromFolder(list)
        }}
      />
      <input
        ref={tarball}
        id="source-tarball"
        class="visually-hidden-focusable"
        type="file"
        accept=".tar.gz,.tgz,application/gzip"
        disabled={busy}
        onChange={(e) => {
          const f = e.currentTarget.files?.[0]
          if (f) fromTarball(f)
        }}
      />
      <p>
        <label for="source-folder" class="link-label">
          Choose a source folder
        </label>{' '}
        or{' '}
        <label for="source-tarball" class="link-label">
          choose a .tar.gz
        </label>
        .
      </p>
      {packing && (
        <p class="small" aria-live="polite">
          Packing the folder…
        </p>
      )}
      {progress && (
        <div class="progress-wrap" aria-live="polite">
          <progress max={100} value={pct} aria-label="Upload progress" />
          <span class="small">
            Uploading the source: {bytes(progress.sent)} of {bytes(progress.total)} ({pct} %)
          </span>
        </div>
      )}
      <ErrorBox error={error} />
      {leftOut.length > 0 && <LeftOutNote leftOut={leftOut} kind="service" />}
    </div>
  )
}
