import { render } from 'preact'
import { Root } from './root'
import { configureApi } from './api/client'
import { clearSession, rememberReturn } from './api/session'
import { navigate } from './router'
import { setNotice } from './notice'
import './style.css'

// The API's address comes from the server (/config.json = BASE_URL), so one build serves
// every environment.
async function start() {
  const el = document.getElementById('app')!
  let baseUrl = ''
  try {
    const res = await fetch('/config.json', { cache: 'no-store' })
    baseUrl = ((await res.json()) as { baseUrl: string }).baseUrl
  } catch {
    el.textContent = 'The console could not read its configuration (/config.json). Reload to try again.'
    return
  }
  configureApi({
    baseUrl,
    onNotice: setNotice,
    onUnauthorized: () => {
      clearSession()
      rememberReturn(location.pathname + location.search)
      window.dispatchEvent(new Event('tori:session'))
      navigate('/', { replace: true })
    },
  })
  render(<Root />, el)
}

start()
