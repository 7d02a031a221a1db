import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { messageOf } from './api/errors'

export type Loaded<T> = { data: T | null; error: string | null; loading: boolean; reload: () => void }

// useLoad runs load now and whenever deps change, keeping the last answer while reloading.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  const live = useRef(true)
  useEffect(() => () => void (live.current = false), [])
  useEffect(() => {
    let current = true
    setLoading(true)
    load().then(
      (d) => {
        if (!current || !live.current) return
        setData(d)
        setError(null)
        setLoading(false)
      },
      (e) => {
        if (!current || !live.current) return
        setError(messageOf(e))
        setLoading(false)
      },
    )
    return () => void (current = false)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick])
  const reload = useCallback(() => setTick((t) => t + 1), [])
  return { data, error, loading, reload }
}

// useInterval calls fn every ms while enabled.
export function useInterval(fn: () => void, ms: number, enabled: boolean) {
  const saved = useRef(fn)
  saved.current = fn
  useEffect(() => {
    if (!enabled) return
    const id = setInterval(() => saved.current(), ms)
    return () => clearInterval(id)
  }, [ms, enabled])
}

// useAction wraps a submit: busy while it runs, its error in the API's words.
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await fn()
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run, setError }
}
