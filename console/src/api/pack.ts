// packSource makes a service's source tarball (.tar.gz, tori.json at its top) from a chosen
// folder's files, in the browser. Loaded when a folder is chosen, so the first page load does
// not carry the tar writer.
import { createTarGzip } from 'nanotar'
import type { SiteFile } from './upload'

// The tar writer stores a path in the header's 100-byte name field and nothing longer.
const MAX_PATH_BYTES = 100

export async function packSource(files: SiteFile[]): Promise<Blob> {
  if (!files.some((f) => f.path === 'tori.json')) {
    throw new Error('No tori.json at the top of the folder: a service deploys from the folder that holds it (tori init writes one).')
  }
  const enc = new TextEncoder()
  const long = files.find((f) => enc.encode(f.path).length > MAX_PATH_BYTES)
  if (long) {
    throw new Error(`${long.path} is a path longer than ${MAX_PATH_BYTES} bytes, which the console cannot pack: deploy this folder with tori deploy.`)
  }
  const entries = await Promise.all(files.map(async (f) => ({ name: f.path, data: new Uint8Array(await f.file.arrayBuffer()) })))
  const gz = await createTarGzip(entries)
  return new Blob([gz as Uint8Array<ArrayBuffer>], { type: 'application/gzip' })
}
