// The typed client of the public API (types generated from services/gateway/openapi.json),
// through the console's own server: the page calls /api/… on its own origin, and the server
// adds the session's bearer token. Every state-changing call carries the session's CSRF
// token; every POST an Idempotency-Key; a 429 is waited out once when its Retry-After is
// short; a 401 ends the session.
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from './schema'
import { ApiError, retryAfterOf } from './errors'
import { clearSession, loadSession } from './session'

export type Client = ReturnType<typeof createClient<paths>>

let client: Client | null = null
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
    if (res.status === 401 && loadSession()) handleUnauthorized()
    return res
  }
}

// stateChanging is what the console's server checks the CSRF token on.
const stateChanging = (method: string) => !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase())

// callHeaders are the console's headers for one call: the CSRF token on a state-changing
// one, an Idempotency-Key on a POST.
export function callHeaders(method: string): Record<string, string> {
  const h: Record<string, string> = {}
  const s = loadSession()
  if (s && stateChanging(method)) h['X-CSRF-Token'] = s.csrfToken
  if (method.toUpperCase() === 'POST') h['Idempotency-Key'] = idempotencyKey()
  return h
}

const headers: Middleware = {
  onRequest({ request }) {
    for (const [k, v] of Object.entries(callHeaders(request.method))) {
      if (!request.headers.has(k)) request.headers.set(k, v)
    }
    return request
  },
}

export function configureApi(opts: { onUnauthorized: () => void; onNotice: (t: string | null) => void }) {
  unauthorized = opts.onUnauthorized
  notice = opts.onNotice
  client = createClient<paths>({ baseUrl: location.origin, fetch: send, credentials: 'same-origin' })
  client.use(headers)
}

export function api(): Client {
  if (!client) throw new Error('API client used before configureApi')
  return client
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

export function handleUnauthorized() {
  clearSession()
  unauthorized()
}
