// A small history-API router: the console has a handful of routes and needs nothing more.
import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'

const EVENT = 'tori:navigate'

// navigations counts moves inside the page (links, back and forward), so that the main heading
// takes focus after one but not on the first load.
let navigations = 0
export const navigationCount = () => navigations
window.addEventListener('popstate', () => void navigations++)

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  if (opts.replace) history.replaceState(null, '', to)
  else history.pushState(null, '', to)
  navigations++
  window.dispatchEvent(new Event(EVENT))
  window.scrollTo(0, 0)
}

export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href))
  useEffect(() => {
    const update = () => setUrl(new URL(location.href))
    window.addEventListener('popstate', update)
    window.addEventListener(EVENT, update)
    return () => {
      window.removeEventListener('popstate', update)
      window.removeEventListener(EVENT, update)
    }
  }, [])
  return url
}

type LinkProps = JSX.HTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren }

export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(href)
  }
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  )
}

// match returns the named segments of path against a pattern like /apps/:slug/logs.
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean)
  const s = path.split('/').filter(Boolean)
  if (p.length !== s.length) return null
  const out: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i])
    else if (p[i] !== s[i]) return null
  }
  return out
}
