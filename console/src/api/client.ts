// The typed client of the public API (types generated from services/gateway/openapi.json).
// Every request carries the session's token; every POST an Idempotency-Key; a 429 is waited
// out once when its Retry-After is short; a 401 ends the session.
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from './schema'
import { ApiError, retryAfterOf } from './errors'
import { clearSession, loadSession } from './session'

export type Client = ReturnType<typeof createClient<paths>>

let client: Client | null = null
let base = ''
let unauthorized: () => void = () => {}
let notice: (text: string | null) => void = () => {}

export function idempotencyKey(): string {
  const b = new Uint8Array(16)
  crypto.getRandomValues(b)
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// The longest Retry-After waited out by itself; a longer one is shown as the error.
const MAX_AUTO_WAIT = 10

async function send(req: Request): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    let res: Response
    try {
      res = await fetch(req.clone())
    } finally {
      // The notice of a waited-out 429 stays until the retry has its answer.
      if (attempt > 0) notice(null)
    }
    if (res.status === 429 && attempt === 0) {
      const wait = retryAfterOf(res)
      if (wait !== null && wait <= MAX_AUTO_WAIT) {
        notice(`Too many requests: trying again in ${wait} s`)
        await sleep(wait * 1000)
        continue
      }
    }
    if (res.status === 401 && req.headers.has('Authorization')) {
      clearSession()
      unauthorized()
    }
    return res
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const s = loadSession()
    if (s && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${s.token}`)
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', idempotencyKey())
    }
    return request
  },
}

export function configureApi(opts: { baseUrl: string; onUnauthorized: () => void; onNotice: (t: string | null) => void }) {
  base = opts.baseUrl.replace(/\/+$/, '')
  unauthorized = opts.onUnauthorized
  notice = opts.onNotice
  client = createClient<paths>({ baseUrl: base, fetch: send })
  client.use(auth)
}

export function api(): Client {
  if (!client) throw new Error('API client used before configureApi')
  return client
}

export function apiBase(): string {
  return base
}

// ok turns an openapi-fetch answer into its data, or throws the API's error.
export async function ok<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p
  if (!response.ok) {
    const body = (error ?? undefined) as ApiError['body'] | undefined
    throw new ApiError(response.status, body, retryAfterOf(response, body))
  }
  return data as T
}

// fetch with the same auth and retry rules, for calls the typed client cannot make (uploads
// use XMLHttpRequest for progress, in upload.ts).
export function authHeaders(): Record<string, string> {
  const s = loadSession()
  return s ? { Authorization: `Bearer ${s.token}` } : {}
}

export function handleUnauthorized() {
  clearSession()
  unauthorized()
}
