// One line shown at the top of the page while the client waits out a 429 by itself.
type Listener = (t: string | null) => void
const listeners = new Set<Listener>()

export function setNotice(text: string | null) {
  for (const l of listeners) l(text)
}

export function onNotice(l: Listener): () => void {
  listeners.add(l)
  return () => listeners.delete(l)
}
