import type { ErrorBody } from './types'

// ApiError is an answer other than 2xx, in the API's own words.
export class ApiError extends Error {
  status: number
  body: Partial<ErrorBody>
  retryAfter: number | null

  constructor(status: number, body: Partial<ErrorBody> | undefined, retryAfter: number | null) {
    const b = body ?? {}
    super(describe(status, b, retryAfter))
    this.status = status
    this.body = b
    this.retryAfter = retryAfter
  }

  get code(): string {
    return this.body.code ?? this.body.error ?? ''
  }
}

function describe(status: number, b: Partial<ErrorBody>, retryAfter: number | null): string {
  const word = b.error ?? b.code ?? `HTTP ${status}`
  let text = b.message && b.message !== word ? `${word}: ${b.message}` : word
  if (b.limit !== undefined && b.plan) text += ` (limit ${b.limit} on ${b.plan})`
  if (status === 429 && retryAfter !== null) text += ` — try again in ${retryAfter} s`
  return text
}

// retryAfterOf reads Retry-After (seconds, or an HTTP date), else the body's retryAfter.
export function retryAfterOf(res: Response, body?: Partial<ErrorBody>): number | null {
  const h = res.headers.get('Retry-After')
  if (h) {
    const n = Number(h)
    if (Number.isFinite(n)) return Math.max(0, Math.ceil(n))
    const d = Date.parse(h)
    if (!Number.isNaN(d)) return Math.max(0, Math.ceil((d - Date.now()) / 1000))
  }
  return typeof body?.retryAfter === 'number' ? body.retryAfter : null
}

export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message
  return String(e)
}
