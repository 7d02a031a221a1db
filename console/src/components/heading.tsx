import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { navigationCount, useLocation } from '../router'

let focusedFor = 0

// PageHeading is a page's h1: it names the page in the tab's title ("title · Tori") and
// takes focus after each move inside the console, so a screen reader starts at the new page
// rather than at the link that led there.
export function PageHeading({ title, children, class: cls }: { title: string; children?: ComponentChildren; class?: string }) {
  const ref = useRef<HTMLHeadingElement>(null)
  const url = useLocation()
  useEffect(() => {
    document.title = `${title} · Tori`
  }, [title])
  useEffect(() => {
    const n = navigationCount()
    if (n > focusedFor && ref.current) {
      focusedFor = n
      ref.current.focus()
    }
  }, [url.pathname, url.search])
  return (
    <h1 ref={ref} tabIndex={-1} class={cls}>
      {children ?? title}
    </h1>
  )
}
