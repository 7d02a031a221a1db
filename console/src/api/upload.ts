// Deploy uploads, as one multipart request through the console's server: a static site's
// files (every part named `files`, its path relative to the site root as the filename), or a
// service's source tarball (one part named `source`, an optional `release`).
// XMLHttpRequest, because fetch reports no upload progress.
import { ApiError, retryAfterOf } from './errors'
import { callHeaders, handleUnauthorized } from './client'
import type { Deploy } from './types'
import { NEVER_ENTERED } from './neverEntered'

export type SiteFile = { path: string; file: File }

export type Progress = (sent: number, total: number) => void

export function uploadSite(slug: string, files: SiteFile[], onProgress: Progress): Promise<Deploy> {
  const form = new FormData()
  for (const f of files) form.append('files', f.file, f.path)
  return uploadDeploy(slug, form, onProgress)
}

// uploadSource deploys a service from a .tar.gz of its source (tori.json at its top).
export function uploadSource(slug: string, tarball: Blob, release: string, onProgress: Progress): Promise<Deploy> {
  const form = new FormData()
  form.append('source', tarball, 'source.tar.gz')
  if (release.trim()) form.append('release', release.trim())
  return uploadDeploy(slug, form, onProgress)
}

function uploadDeploy(slug: string, form: FormData, onProgress: Progress): Promise<Deploy> {
  const headers = callHeaders('POST')
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', `/api/apps/${encodeURIComponent(slug)}/deploys`)
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v)
    xhr.responseType = 'json'
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total)
    }
    xhr.onerror = () => reject(new Error('network error: the upload did not reach the API'))
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(xhr.response as Deploy)
        return
      }
      if (xhr.status === 401) handleUnauthorized()
      const headers = new Headers()
      const ra = xhr.getResponseHeader('Retry-After')
      if (ra) headers.set('Retry-After', ra)
      const body = (xhr.response ?? undefined) as ApiError['body'] | undefined
      reject(new ApiError(xhr.status, body, retryAfterOf(new Response(null, { headers }), body)))
    }
    xhr.send(form)
  })
}

// filesFromInput turns an <input webkitdirectory> selection into site paths: the chosen
// folder's own name is dropped, so its index.html is the site's.
export function filesFromInput(list: FileList): SiteFile[] {
  const out: SiteFile[] = []
  for (const file of Array.from(list)) {
    const rel = file.webkitRelativePath || file.name
    const parts = rel.split('/')
    out.push({ path: parts.length > 1 ? parts.slice(1).join('/') : rel, file })
  }
  return out
}

// filesFromDrop walks dropped folders (and files); a single dropped folder is the site root.
// It does not enter version-control folders (NEVER_ENTERED: never sent, often large) and
// names them in notEntered.
export async function filesFromDrop(dt: DataTransfer): Promise<{ files: SiteFile[]; notEntered: string[] }> {
  const entries: FileSystemEntry[] = []
  for (const item of Array.from(dt.items)) {
    const e = item.webkitGetAsEntry?.()
    if (e) entries.push(e)
  }
  // A browser without entries for the drop still has its files: each one at the site's top.
  if (entries.length === 0) return { files: Array.from(dt.files, (file) => ({ path: file.name, file })), notEntered: [] }
  const out: SiteFile[] = []
  const notEntered: string[] = []
  const children = async (dir: FileSystemDirectoryEntry, prefix: string) => {
    const reader = dir.createReader()
    // readEntries answers in batches until it answers none.
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej))
      if (batch.length === 0) break
      for (const child of batch) await walk(child, prefix)
    }
  }
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej))
      out.push({ path: prefix + entry.name, file })
      return
    }
    if (NEVER_ENTERED.has(entry.name)) {
      notEntered.push(prefix + entry.name)
      return
    }
    await children(entry as FileSystemDirectoryEntry, prefix + entry.name + '/')
  }
  if (entries.length === 1 && entries[0].isDirectory) {
    await children(entries[0] as FileSystemDirectoryEntry, '')
  } else {
    for (const e of entries) await walk(e, '')
  }
  return { files: out, notEntered }
}
