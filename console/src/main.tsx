import { render } from 'preact'
import { Root } from './root'
import { configureApi } from './api/client'
import { clearSession, fetchSession, onOtherTab, rememberReturn, setSession } from './api/session'
import { setNotice } from './notice'
import './style.css'

// The page starts by asking its own server who is signed in (the session itself stays there).
async function start() {
  const el = document.getElementById('app')!
  try {
    setSession(await fetchSession())
  } catch {
    el.textContent = 'The console could not reach its server. Reload to try again.'
    return
  }
  configureApi({
    onNotice: setNotice,
    // The API no longer takes the session: the page shows sign-in where it is, and comes back
    // here once signed in again.
    onUnauthorized: () => {
      clearSession()
      rememberReturn(location.pathname + location.search)
    },
  })
  // A sign-in or sign-out in another tab (the magic link opens one) shows here too.
  onOtherTab(() => fetchSession().then((s) => setSession(s), () => {}))
  render(<Root />, el)
}

start()
