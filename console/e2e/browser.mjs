// The console's browser test: run by tests/e2e/console_test.go (`make test`), which starts
// the control plane and the console and answers this script's questions at CONTROL_URL.
// Debian's Chromium, driven by playwright-core (browser downloads do not work here); every
// page is checked with axe-core, failing on a serious or critical violation.
import { chromium } from 'playwright-core'
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const env = (k) => {
  const v = process.env[k]
  if (!v) throw new Error(`${k} is not set`)
  return v
}
const CONSOLE = env('CONSOLE_URL')
const API = env('API_URL')
const EDGE = env('EDGE_URL')
const APPS_DOMAIN = env('APPS_DOMAIN')
const CONTROL = env('CONTROL_URL')
const SHOTS = env('SCREENSHOT_DIR')
const EMAIL = env('EMAIL')
const desktop = { width: 1280, height: 860 }
const phone = { width: 390, height: 844 }
const T = 30_000

let stepName = ''
const step = (name) => {
  stepName = name
  console.log(`step: ${name}`)
}
const fail = (msg) => {
  throw new Error(`${stepName}: ${msg}`)
}
const control = async (method, path) => {
  const res = await fetch(CONTROL + path, { method })
  const body = await res.json()
  if (!res.ok) fail(`control ${path}: ${res.status} ${JSON.stringify(body)}`)
  return body
}

const profile = mkdtempSync(join(tmpdir(), 'tori-console-chromium-'))
const site = mkdtempSync(join(tmpdir(), 'tori-console-site-'))
// A fresh profile per run; the flags keep Chromium from dialling anywhere but this machine.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env('CHROMIUM'),
  headless: true,
  // The edge answers http:// with 308 to https://, under a certificate of the zone's local CA
  // (DATA_DIR/tls/root.pem), which this fresh profile does not trust; the console itself is
  // plain HTTP. The edge's certificates are checked by the Go e2e tests (harness EdgeClient).
  ignoreHTTPSErrors: true,
  viewport: desktop,
  locale: 'en-US',
  timezoneId: 'UTC',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
})

// The page talks to its own server alone: the API's origin is never asked directly (the
// console's server forwards /api/ with the session's token).
const consoleOrigin = new URL(CONSOLE).origin
const apiOrigin = new URL(API).origin
const strays = []
const direct = []
const cspErrors = []
const pageErrors = []
const postsWithoutKey = []
const changesWithoutCSRF = []
let apiPosts = 0
const watch = (page) => {
  page.on('request', (req) => {
    const u = new URL(req.url())
    if (u.origin === apiOrigin) direct.push(`${req.method()} ${u.pathname}`)
    if (u.origin === consoleOrigin && u.pathname.startsWith('/api/') && req.method() !== 'GET') {
      const h = req.headers()
      if (req.method() === 'POST') {
        apiPosts++
        if (!h['idempotency-key']) postsWithoutKey.push(u.pathname)
      }
      if (!h['x-csrf-token'] && !u.pathname.startsWith('/api/auth/magic-link')) changesWithoutCSRF.push(`${req.method()} ${u.pathname}`)
    }
    if (u.protocol === 'data:' || u.origin === consoleOrigin || u.hostname.endsWith('.' + APPS_DOMAIN) || u.hostname === '127.0.0.1') return
    strays.push(req.url())
  })
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text())
  })
  page.on('pageerror', (e) => pageErrors.push(String(e)))
}
context.on('page', watch)
const page = context.pages()[0] ?? (await context.newPage())
watch(page)

const shot = async (name) => {
  for (const [label, size] of [['desktop', desktop], ['phone', phone]]) {
    await page.setViewportSize(size)
    await page.screenshot({ path: join(SHOTS, `${name}-${label}.png`), fullPage: true })
  }
  await page.setViewportSize(desktop)
}
const visible = (loc, timeout = T) => loc.first().waitFor({ state: 'visible', timeout })
const urlIs = async (path) => page.waitForURL((u) => u.pathname === path, { timeout: T })

// axe-core on the page as it is, in the page's own world (evaluate is not subject to the
// CSP); a serious or critical violation fails the run.
const checked = []
const a11y = async (name) => {
  await page.evaluate(axeSource)
  const r = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }))
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  if (bad.length) {
    fail(`axe on ${name}: ` + bad.map((v) => `${v.id} (${v.impact}: ${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`).join('; '))
  }
  checked.push(name)
}

// The tab's title names the page; after a move inside the console the main heading has focus.
const titled = async (want) => {
  await page.waitForFunction((w) => document.title === `${w} · Tori`, want, { timeout: T }).catch(() => {})
  const got = await page.title()
  if (got !== `${want} · Tori`) fail(`title ${JSON.stringify(got)}, want ${JSON.stringify(want + ' · Tori')}`)
}
const headingFocused = async () => {
  await page.waitForFunction(() => document.activeElement?.tagName === 'H1', null, { timeout: 5000 }).catch(() => {})
  const tag = await page.evaluate(() => document.activeElement?.tagName)
  if (tag !== 'H1') fail(`focus is on ${tag}, not the main heading`)
}

// Signed out, a deep link shows the sign-in form where it is (no blank page, no move).
const signInShownAt = async (url) => {
  await page.goto(url)
  await visible(page.getByLabel('Email address'))
  const at = new URL(page.url())
  const want = new URL(url)
  if (at.pathname + at.search !== want.pathname + want.search) fail(`${url} moved to ${page.url()}`)
  await titled('Sign in')
}

// signInHere requests a magic link from the sign-in form on the page and opens it in the
// same tab, as a user does.
const signInHere = async () => {
  await page.getByLabel('Email address').fill(EMAIL)
  await page.keyboard.press('Enter') // the form works from the keyboard
  await visible(page.getByText('Check your mail').first())
  const { link } = await control('GET', `/mail?email=${encodeURIComponent(EMAIL)}&after=${mailsTaken++}`)
  await page.goto(link)
}
let mailsTaken = 0

// noTokenInScript: what the page's scripts can read holds no session or API token.
const noTokenInScript = async () => {
  const seen = await page.evaluate(() => ({
    cookie: document.cookie,
    local: Object.entries(localStorage),
    session: Object.entries(sessionStorage),
  }))
  const all = JSON.stringify(seen)
  if (/tok_|svc_/.test(all)) fail(`a token is within script's reach: ${all}`)
  if (seen.cookie !== '') fail(`document.cookie is ${JSON.stringify(seen.cookie)}, want nothing`)
  const cookies = await context.cookies(CONSOLE)
  const sessionCookie = cookies.find((c) => c.name === 'tori_console')
  if (!sessionCookie || !sessionCookie.httpOnly || sessionCookie.sameSite !== 'Lax') fail(`the session cookie: ${JSON.stringify(cookies)}`)
  if (sessionCookie.value.includes('tok_')) fail('the cookie holds the API token')
  return sessionCookie
}

try {
  step('signed out, every deep link shows the sign-in form in place')
  const loopSignedOut = await control('POST', '/loopback')
  for (const url of [CONSOLE + '/apps/some-app/logs', CONSOLE + '/account', CONSOLE + '/invitations/accept?token=not-a-real-code', loopSignedOut.url]) await signInShownAt(url)
  await a11y('sign-in on a deep link')
  await page.goto(CONSOLE + '/auth/verify?token=not-a-real-code')
  await visible(page.getByText('This link did not sign you in'))
  if (new URL(page.url()).search !== '') fail('the code stayed in the address bar')
  await titled('Sign-in failed')
  await a11y('a magic link that does not work')

  step('device sign-in signed out: the sign-in form, then after the magic link the same page with the code')
  const device = await control('POST', '/device')
  await signInShownAt(device.verificationUriComplete)
  await shot('device-signed-out')
  await a11y('sign-in')
  await signInHere()
  await page.waitForURL((u) => u.pathname === '/device', { timeout: T })
  const codeInput = page.getByLabel('Code')
  await visible(codeInput)
  if ((await codeInput.inputValue()) !== device.userCode) fail(`code field holds ${await codeInput.inputValue()}, want ${device.userCode}`)
  if (new URL(page.url()).searchParams.get('user_code') !== device.userCode) fail(`back at ${page.url()}, not the device link`)
  await titled('Sign in the command line')
  await shot('device-approval')
  await a11y('device approval')

  step('the signed-in console holds no token where a script could read it')
  const sessionCookie = await noTokenInScript()
  const live = await control('GET', `/live-sessions?email=${encodeURIComponent(EMAIL)}`)
  if (live.count !== 1) fail(`${live.count} live API sessions after one sign-in`)

  step('device sign-in: approve the code a command line is polling')
  await page.getByRole('button', { name: 'Approve' }).click()
  await visible(page.getByText('Command line signed in'))
  await titled('Command line signed in')
  await a11y('device approved')
  const result = await control('GET', '/device/result')
  if (!result.approved) fail(`the polling client was not let in: ${result.error}`)

  step('device sign-in: deny, and the polling client is refused')
  const denied = await control('POST', '/device')
  await page.goto(denied.verificationUriComplete)
  await page.getByRole('button', { name: 'Deny' }).click()
  await visible(page.getByText('Sign-in denied'))
  const refused = await control('GET', '/device/result')
  if (refused.approved || !String(refused.error).includes('access_denied')) fail(`after deny the client got ${JSON.stringify(refused)}`)

  step('loopback sign-in: authorize and return to the command line')
  await page.goto(CONSOLE + '/cli/authorize')
  await visible(page.getByText('Incomplete request'))
  await a11y('command-line authorize, incomplete')
  const loop = await control('POST', '/loopback')
  await page.goto(loop.url)
  await titled('Authorize the command line')
  await a11y('command-line authorize')
  await page.getByRole('button', { name: 'Authorize' }).click()
  await page.waitForURL((u) => u.pathname === '/callback', { timeout: T })
  await visible(page.locator('#done'))

  step('errors in the API\'s words; a 429 waited out or shown with its Retry-After')
  await page.goto(CONSOLE + '/apps')
  await page.getByLabel('Name').fill('api')
  await page.getByRole('button', { name: 'Create app' }).click()
  await visible(page.getByRole('alert').filter({ hasText: 'slug taken' }))
  const limited = (retryAfter) => ({
    status: 429,
    headers: { 'Content-Type': 'application/json', 'Retry-After': String(retryAfter) },
    body: JSON.stringify({ error: 'rate_limited', code: 'rate_limited', retryAfter }),
  })
  // A short Retry-After is waited out: the list loads after the notice.
  // The retry is held until the notice has been seen, so the check never races the wait.
  let listCalls = 0
  let releaseRetry
  const retryHeld = new Promise((r) => (releaseRetry = r))
  await page.route(CONSOLE + '/api/apps', async (route) => {
    if (route.request().method() !== 'GET') return route.fallback()
    if (listCalls++ === 0) return route.fulfill(limited(1))
    await retryHeld
    return route.fallback()
  })
  await page.reload()
  await visible(page.getByRole('status').filter({ hasText: 'Too many requests: trying again in 1 s' }))
  releaseRetry()
  await visible(page.getByText('No apps yet'))
  await titled('Apps')
  await a11y('apps list, empty')
  if ((await page.getByText('Too many requests').count()) !== 0) fail('the notice stayed after the retry')
  if (listCalls < 2) fail('the 429 was not retried')
  await page.unroute(CONSOLE + '/api/apps')
  // A long one is the error, with its wait.
  await page.route(CONSOLE + '/api/apps', (route) => (route.request().method() === 'POST' ? route.fulfill(limited(60)) : route.fallback()))
  await page.getByLabel('Name').fill('later')
  await page.getByRole('button', { name: 'Create app' }).click()
  await visible(page.getByRole('alert').filter({ hasText: 'rate_limited — try again in 60 s' }))
  await page.unroute(CONSOLE + '/api/apps')

  step('apps: create one')
  const slug = `web-${Math.random().toString(16).slice(2, 10)}`
  await page.goto(CONSOLE + '/apps')
  await page.getByLabel('Name').fill(slug)
  await page.getByRole('button', { name: 'Create app' }).click()
  await urlIs(`/apps/${slug}`)
  await visible(page.getByText('No deploys yet'))
  await titled(`Deploys · ${slug}`)
  await headingFocused()
  await a11y('app overview, no deploys')
  const href = await page.getByTestId('app-url').getAttribute('href')
  if (href !== `https://${slug}.${APPS_DOMAIN}`) fail(`app URL ${href}`)

  step('deploy: a folder, with upload progress, until live')
  const marker = `console-e2e-${Date.now()}`
  mkdirSync(join(site, 'assets'))
  writeFileSync(join(site, 'index.html'), `<!doctype html><title>${marker}</title><link rel="stylesheet" href="assets/site.css"><h1 id="marker">${marker}</h1>`)
  writeFileSync(join(site, 'assets', 'site.css'), 'h1 { color: rebeccapurple }')
  // What a site's folder holds besides its pages: secrets, its repository, dependencies, a
  // .gitignore'd draft. Only .well-known/ of the dot paths is published.
  const securityTxt = 'Contact: mailto:security@example.com\n'
  for (const [name, body] of [
    ['.env', 'SECRET=from-the-console'],
    ['.git/config', '[core]\n'],
    ['.well-known/security.txt', securityTxt],
    ['.gitignore', 'drafts/\n'],
    ['drafts/next.html', 'not yet'],
    ['node_modules/lib/index.js', 'dep'],
  ]) {
    mkdirSync(join(site, name, '..'), { recursive: true })
    writeFileSync(join(site, name), body)
  }
  // The upload is held at the browser's edge until its progress bar has been seen.
  let release
  const held = new Promise((r) => (release = r))
  await page.route(`${CONSOLE}/api/apps/${slug}/deploys`, async (route) => {
    if (route.request().method() !== 'POST') return route.fallback()
    await held
    return route.fallback()
  })
  await page.locator('#folder-input').setInputFiles(site)
  await visible(page.getByLabel('Upload progress'))
  await visible(page.getByText('Uploading 3 files'))
  const leftOut = page.getByTestId('left-out')
  await visible(leftOut)
  await leftOut.locator('summary').click()
  for (const p of ['.env', '.git/', '.gitignore', 'drafts/', 'node_modules/']) await visible(leftOut.locator('li code').getByText(p, { exact: true }))
  release()
  const row = page.locator('tr[data-deploy]').first()
  await visible(row)
  await visible(row.locator('.badge', { hasText: 'live' }), 90_000)
  await visible(page.getByTestId('current-deploy').locator('.badge', { hasText: 'live' }))
  await page.unroute(`${CONSOLE}/api/apps/${slug}/deploys`)
  if ((await page.getByLabel('Upload progress').count()) !== 0) fail('the progress bar stayed after the upload')

  step('deploy: the site is served through the edge')
  const edge = new URL(EDGE)
  const servedMarker = async () => {
    const p = await context.newPage()
    try {
      await p.goto(`http://${slug}.${APPS_DOMAIN}:${edge.port}/`)
      const color = await p.locator('#marker').evaluate((el) => getComputedStyle(el).color)
      if (color !== 'rgb(102, 51, 153)') fail(`assets/site.css not served at its path (color ${color})`)
      return await p.locator('#marker').innerText()
    } finally {
      await p.close()
    }
  }
  const served = await servedMarker()
  if (served !== marker) fail(`the edge served ${served}`)
  const edgeStatus = async (path) => {
    const p = await context.newPage()
    try {
      const res = await p.goto(`http://${slug}.${APPS_DOMAIN}:${edge.port}${path}`)
      return [res.status(), await res.text()]
    } finally {
      await p.close()
    }
  }
  {
    const [status, body] = await edgeStatus('/.well-known/security.txt')
    if (status !== 200 || body !== securityTxt) fail(`.well-known/security.txt: ${status} ${body}`)
  }
  for (const path of ['/.env', '/.git/config', '/drafts/next.html', '/node_modules/lib/index.js']) {
    const [status] = await edgeStatus(path)
    if (status !== 404) fail(`${path} answered ${status}, want 404`)
  }

  step('deploy again, then roll back to the first')
  const firstId = await page.locator('tr[data-deploy]').first().getAttribute('data-deploy')
  writeFileSync(join(site, 'index.html'), `<!doctype html><title>v2</title><link rel="stylesheet" href="assets/site.css"><h1 id="marker">${marker}-v2</h1>`)
  await page.locator('#folder-input').setInputFiles(site)
  const second = page.locator(`tr[data-deploy]:not([data-deploy="${firstId}"])`).first()
  await visible(second.locator('.badge', { hasText: 'live' }), 90_000)
  if ((await servedMarker()) !== `${marker}-v2`) fail('the second deploy is not served')
  const firstRow = page.locator(`tr[data-deploy="${firstId}"]`)
  await visible(firstRow.locator('.badge', { hasText: 'superseded' }))
  await firstRow.getByRole('button', { name: 'Roll back' }).click()
  const rollbackRow = page.locator('tr[data-deploy]', { hasText: `rollback of ${firstId.slice(-8)}` })
  await visible(rollbackRow.locator('.badge', { hasText: 'live' }), 90_000)
  if ((await servedMarker()) !== marker) fail('the rollback does not serve the first deploy')

  step('redeploy the current deploy')
  const beforeRedeploy = await page.locator('tr[data-deploy]').count()
  await page.getByRole('button', { name: 'Redeploy' }).click()
  await page.waitForFunction((n) => document.querySelectorAll('tr[data-deploy]').length > n, beforeRedeploy, { timeout: T })
  await visible(page.locator('tr[data-deploy]').first().locator('.badge', { hasText: 'live' }), 90_000)
  if ((await servedMarker()) !== marker) fail('the redeploy does not serve the current deploy')

  step('app page: deploys and logs')
  await page.reload()
  await visible(page.locator('tr[data-deploy] .badge', { hasText: 'live' }))
  await page.getByRole('button', { name: 'Output' }).first().click()
  await visible(page.getByTestId('deploy-output'))
  await shot('app-deploys')
  await a11y('app overview with deploys and output')
  await page.getByRole('link', { name: 'Logs' }).click()
  await urlIs(`/apps/${slug}/logs`)
  await titled(`Logs · ${slug}`)
  await headingFocused()
  await visible(page.getByLabel('Window'))
  await visible(page.getByTestId('logs').locator('.line'))
  await page.getByLabel('Follow').check()
  // The owner sees the app's log drains below its lines (admins only).
  await visible(page.getByRole('heading', { name: 'Log drains' }))
  await shot('app-logs')
  await a11y('logs')

  step('app page: previews and metrics')
  await page.getByRole('link', { name: 'Previews' }).click()
  await urlIs(`/apps/${slug}/previews`)
  await titled(`Previews · ${slug}`)
  await visible(page.getByText('No previews'))
  await a11y('previews')
  await page.getByRole('link', { name: 'Metrics' }).click()
  await urlIs(`/apps/${slug}/metrics`)
  await titled(`Metrics · ${slug}`)
  // The site's requests so far: a chart each for requests and latency, or its empty state.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="metric-chart"]').length === 2, null, { timeout: T })
  await shot('app-metrics')
  await a11y('metrics')

  step('environment: set a variable and never see its value')
  const secret = `s3cret-${Math.random().toString(36).slice(2)}-value`
  await page.getByRole('link', { name: 'Environment' }).click()
  await urlIs(`/apps/${slug}/env`)
  await titled(`Environment · ${slug}`)
  await headingFocused()
  await visible(page.getByText('No variables'))
  await page.getByLabel('Key').fill('API_SECRET')
  await page.getByLabel('Value').fill(secret)
  await page.getByLabel('Value').press('Enter')
  const envRow = page.locator('tr[data-env="API_SECRET"]')
  await visible(envRow)
  const shown = await envRow.innerText()
  if (!shown.includes('********')) fail(`the value is not masked: ${shown}`)
  const leaks = async () => {
    const html = await page.content()
    const values = await page.locator('input').evaluateAll((els) => els.map((e) => e.value))
    return html.includes(secret) || values.some((v) => v.includes(secret))
  }
  if (await leaks()) fail('the value is on the page after it was set')
  await page.reload()
  await visible(envRow)
  if (await leaks()) fail('the value is on the page after a reload')
  await a11y('environment')
  // Removing asks first: Cancel (or Escape) keeps the variable; the dialog's action removes it.
  await envRow.getByRole('button', { name: 'Remove API_SECRET' }).click()
  const ask = page.getByRole('dialog', { name: 'Remove API_SECRET?' })
  await visible(ask)
  await a11y('confirm dialog')
  await ask.getByRole('button', { name: 'Cancel' }).click()
  await ask.waitFor({ state: 'hidden', timeout: T })
  await envRow.getByRole('button', { name: 'Remove API_SECRET' }).click()
  await visible(ask)
  await page.keyboard.press('Escape')
  await ask.waitFor({ state: 'hidden', timeout: T })
  await page.reload()
  await visible(envRow)
  await envRow.getByRole('button', { name: 'Remove API_SECRET' }).click()
  await ask.getByRole('button', { name: 'Remove API_SECRET' }).click()
  await visible(page.getByText('No variables'))

  step('domains: the plan\'s limit in the API\'s words; database: its empty state')
  await page.getByRole('link', { name: 'Domains' }).click()
  await urlIs(`/apps/${slug}/domains`)
  await visible(page.getByText('No custom domains'))
  await page.getByLabel('Hostname').fill(`www.${slug}.example.com`)
  await page.getByLabel('Hostname').press('Enter')
  await visible(page.getByRole('alert').filter({ hasText: 'domain_limit_reached' }))
  await titled(`Domains · ${slug}`)
  await a11y('domains')
  // The free plan holds no custom domain, so a listed one is stubbed in the browser; the
  // removal is asked first and only then sent.
  const host = `www.${slug}.example.com`
  const deletes = []
  await page.route(`${CONSOLE}/api/apps/${slug}/domains**`, (route) => {
    const req = route.request()
    if (req.method() === 'DELETE') {
      deletes.push(req.url())
      return route.fulfill({ status: 204 })
    }
    return route.fulfill({
      json: deletes.length ? [] : [{ hostname: host, status: 'pending', createdAt: new Date().toISOString(), verification: { type: 'TXT', name: `_tori.${host}`, value: 'tori-verify=abc' } }],
    })
  })
  await page.reload()
  await page.getByRole('button', { name: `Remove ${host}` }).click()
  const askDomain = page.getByRole('dialog', { name: `Remove ${host}?` })
  await visible(askDomain)
  await askDomain.getByRole('button', { name: 'Cancel' }).click()
  if (deletes.length) fail('the domain was removed without being asked')
  await page.getByRole('button', { name: `Remove ${host}` }).click()
  await askDomain.getByRole('button', { name: `Remove ${host}` }).click()
  await visible(page.getByText('No custom domains'))
  if (deletes.length !== 1) fail(`${deletes.length} DELETEs after confirming`)
  await page.unroute(`${CONSOLE}/api/apps/${slug}/domains**`)
  await page.getByRole('link', { name: 'Database' }).click()
  await urlIs(`/apps/${slug}/database`)
  await visible(page.getByText('Managed databases are for service apps'))
  await titled(`Database · ${slug}`)
  await a11y('database, static app')
  await page.getByRole('link', { name: 'Settings' }).click()
  await urlIs(`/apps/${slug}/settings`)
  await titled(`Settings · ${slug}`)
  await headingFocused()
  await a11y('settings')

  step('tokens: the secret is shown exactly once')
  await page.getByRole('link', { name: 'Account' }).click()
  await urlIs('/account')
  await page.getByLabel('Name', { exact: true }).fill('ci')
  await page.getByRole('button', { name: 'Create token' }).click()
  const secretBox = page.getByTestId('token-secret')
  await visible(secretBox)
  const apiToken = (await secretBox.innerText()).trim()
  if (!apiToken.startsWith('svc_')) fail(`token secret ${apiToken}`)
  const works = await control('GET', `/token-works?token=${encodeURIComponent(apiToken)}`)
  if (!works.works) fail('the token the console showed does not work')
  await page.getByLabel('Default region for new apps').selectOption('us')
  await visible(page.getByRole('status').filter({ hasText: 'Saved.' }))
  const prefixCell = page.locator('tr[data-token] code').first()
  await visible(prefixCell)
  await page.reload()
  await visible(page.locator('tr[data-token]'))
  if ((await page.content()).includes(apiToken)) fail('the secret is shown again after a reload')
  if ((await page.getByTestId('token-secret').count()) !== 0) fail('a secret box is still there')
  await titled('Account')
  await a11y('account')
  await noTokenInScript()

  step('billing: the hold banner with its dates, checkout when configured (billing answers stubbed: no payment provider runs here)')
  await page.route(CONSOLE + '/api/billing', async (route) => {
    const real = await route.fetch()
    const body = await real.json()
    body.configured = true
    body.subscription = null
    body.hold = {
      since: '2026-03-01T00:00:00.000Z',
      stage: 'deploys_refused',
      deploysRefusedFrom: '2026-03-08T00:00:00.000Z',
      servingStopsFrom: '2026-03-15T00:00:00.000Z',
      reclaimableFrom: '2026-03-31T00:00:00.000Z',
    }
    return route.fulfill({ response: real, json: body })
  })
  await page.route(CONSOLE + '/api/billing/checkout', (route) =>
    route.fulfill({ status: 200, json: { url: CONSOLE + '/billing-return' } }),
  )
  await page.goto(CONSOLE + '/account')
  const banner = page.locator('.banner').first()
  await visible(banner)
  const said = await banner.innerText()
  for (const d of ['Mar 1, 2026', 'Mar 8, 2026', 'Mar 15, 2026', 'Mar 31, 2026']) if (!said.includes(d)) fail(`the hold banner lacks ${d}: ${said}`)
  await a11y('account with the hold banner and plans')
  await page.getByLabel('Billed').selectOption('year')
  const checkout = page.waitForRequest((r) => r.url() === CONSOLE + '/api/billing/checkout')
  await page.getByRole('button', { name: 'Choose songbird' }).click()
  const sent = (await checkout).postDataJSON()
  if (sent.plan !== 'songbird' || sent.interval !== 'year') fail(`checkout asked for ${JSON.stringify(sent)}`)
  await urlIs('/billing-return')
  await visible(page.getByRole('heading', { name: 'Not found' }))
  await titled('Not found')
  await a11y('not found')
  await page.unroute(CONSOLE + '/api/billing')
  await page.unroute(CONSOLE + '/api/billing/checkout')

  step('apps list at desktop and phone widths')
  await page.goto(CONSOLE + '/apps')
  await visible(page.locator('.card', { hasText: slug }))
  await visible(page.locator('.card', { hasText: slug }).locator('.badge', { hasText: 'running' }))
  await shot('apps-list')
  await a11y('apps list')

  step('the console restarts and the browser stays signed in (sessions in Redis)')
  await control('POST', '/restart-console')
  await page.reload()
  await visible(page.locator('.card', { hasText: slug }))
  await noTokenInScript()

  step('a service app: deploy a source folder (packed in the browser) with a release command')
  // A second app, so the first stays for the screenshots above.
  await page.getByLabel('Name').fill(`${slug}-x`)
  await page.getByLabel('Kind').selectOption('service')
  await page.getByRole('button', { name: 'Create app' }).click()
  await urlIs(`/apps/${slug}-x`)
  await visible(page.getByTestId('source-deploy'))
  await a11y('app overview, a service')
  const src = mkdtempSync(join(tmpdir(), 'tori-console-source-'))
  const server = `require('http').createServer((q, s) => s.end((require('fs').existsSync('released') ? 'released ' : 'unreleased ') + require('./version.json').v)).listen(process.env.PORT, '127.0.0.1')\n`
  writeFileSync(join(src, 'tori.json'), JSON.stringify({ start: 'node server.js' }))
  writeFileSync(join(src, 'server.js'), server)
  writeFileSync(join(src, 'version.json'), '{"v":"1"}')
  writeFileSync(join(src, '.env'), 'SECRET=never-sent')
  mkdirSync(join(src, '.git'))
  writeFileSync(join(src, '.git', 'config'), '[core]\n')
  const serviceSays = async (want) => {
    const deadline = Date.now() + 60_000
    let got = ''
    while (Date.now() < deadline) {
      const p = await context.newPage()
      try {
        const res = await p.goto(`http://${slug}-x.${APPS_DOMAIN}:${new URL(EDGE).port}/`)
        got = `${res.status()} ${await res.text()}`
        if (got === `200 ${want}`) return
      } catch (e) {
        got = String(e)
      } finally {
        await p.close()
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
    fail(`the service answered ${got}, want ${want}`)
  }
  await page.getByLabel('Release command').fill('sh -c touch${IFS}released')
  await page.locator('#source-folder').setInputFiles(src)
  const srcLeftOut = page.getByTestId('left-out')
  await visible(srcLeftOut)
  await srcLeftOut.locator('summary').click()
  for (const p of ['.env', '.git/']) await visible(srcLeftOut.locator('li code').getByText(p, { exact: true }))
  const srcRow = page.locator('tr[data-deploy]').first()
  await visible(srcRow.locator('.badge', { hasText: 'live' }), 120_000)
  await serviceSays('released 1')

  step('a service app: deploy a .tar.gz')
  writeFileSync(join(src, 'version.json'), '{"v":"2"}')
  const tarball = join(tmpdir(), `tori-console-${Date.now()}.tar.gz`)
  execFileSync('tar', ['-czf', tarball, '-C', src, 'tori.json', 'server.js', 'version.json'])
  await page.getByLabel('Release command').fill('')
  await page.locator('#source-tarball').setInputFiles(tarball)
  await page.waitForFunction(() => document.querySelectorAll('tr[data-deploy]').length >= 2, null, { timeout: T })
  await visible(page.locator('tr[data-deploy]').first().locator('.badge', { hasText: 'live' }), 120_000)
  await serviceSays('unreleased 2')
  rmSync(src, { recursive: true, force: true })
  rmSync(tarball, { force: true })

  step('a service app: processes with a scale control, cron jobs with their runs (the API stubbed in the browser)')
  // The formation and cron routes are answered here, so the page is checked whatever the zone
  // runs; what the page sends is recorded.
  const appAPI = `${CONSOLE}/api/apps/${slug}-x`
  const at = new Date().toISOString()
  let formation = [
    { type: 'web', command: 'node server.js', quantity: 1, running: 1, updatedAt: at },
    { type: 'worker', command: 'node worker.js', quantity: 0, running: 0, updatedAt: at },
  ]
  const run = { id: '0193f1c2-0000-7000-8000-0000000000a1', trigger: 'manual', scheduledFor: at, status: 'succeeded', skipReason: null, exitCode: 0, startedAt: at, finishedAt: at, deployId: null }
  const skipped = { ...run, id: '0193f1c2-0000-7000-8000-0000000000a2', trigger: 'scheduled', status: 'skipped', skipReason: 'overlap', exitCode: null, startedAt: null, finishedAt: null }
  let jobs = []
  const scaleAndCron = []
  await page.route(`${appAPI}/formation`, (route) => {
    const req = route.request()
    if (req.method() === 'PATCH') {
      const body = req.postDataJSON()
      scaleAndCron.push(`PATCH formation ${JSON.stringify(body)}`)
      formation = formation.map((e) => {
        const u = body.updates.find((x) => x.type === e.type)
        return u ? { ...e, quantity: u.quantity, running: u.quantity } : e
      })
    }
    return route.fulfill({ json: formation })
  })
  await page.route(`${appAPI}/crons**`, (route) => {
    const req = route.request()
    const path = new URL(req.url()).pathname
    const method = req.method()
    if (path.endsWith('/crons') && method === 'POST') {
      const body = req.postDataJSON()
      scaleAndCron.push(`POST crons ${JSON.stringify(body)}`)
      jobs = [{ ...body, timeoutSeconds: 900, enabled: true, nextRunAt: '2026-12-01T02:00:00Z', lastRun: null, createdAt: at, updatedAt: at }]
      return route.fulfill({ status: 201, json: jobs[0] })
    }
    if (path.endsWith('/crons')) return route.fulfill({ json: jobs })
    if (path.endsWith('/runs') && method === 'POST') {
      scaleAndCron.push('POST runs')
      jobs = jobs.map((j) => ({ ...j, lastRun: run }))
      return route.fulfill({ status: 201, json: run })
    }
    if (path.endsWith('/runs')) return route.fulfill({ json: [run, skipped] })
    if (method === 'DELETE') {
      scaleAndCron.push('DELETE cron')
      jobs = []
      return route.fulfill({ status: 204 })
    }
    return route.fulfill({ status: 404, json: { error: 'not found' } })
  })
  await page.getByRole('link', { name: 'Processes' }).click()
  await urlIs(`/apps/${slug}-x/processes`)
  await titled(`Processes · ${slug}-x`)
  await headingFocused()
  const workerRow = page.locator('tr[data-process="worker"]')
  await visible(workerRow.getByText('0 of 0'))
  await workerRow.getByLabel('Instances of worker').fill('1')
  await workerRow.getByRole('button', { name: 'Scale' }).click()
  await visible(workerRow.getByText('1 of 1'))
  if (scaleAndCron[0] !== 'PATCH formation {"updates":[{"type":"worker","quantity":1}]}') fail(`scaling scaleAndCron ${scaleAndCron[0]}`)
  await visible(page.getByText('No cron jobs'))
  await a11y('processes and cron jobs')
  await page.locator('#cron-name').fill('nightly')
  await page.locator('#cron-timezone').fill('Europe/Prague')
  await page.locator('#cron-command').fill('node report.js')
  await page.getByRole('button', { name: 'Add cron job' }).click()
  const cronRow = page.locator('tr[data-cron="nightly"]')
  await visible(cronRow)
  const wantCron = 'POST crons {"name":"nightly","schedule":"0 3 * * *","timezone":"Europe/Prague","command":"node report.js","concurrencyPolicy":"forbid"}'
  if (scaleAndCron[1] !== wantCron) fail(`adding scaleAndCron ${scaleAndCron[1]}`)
  await cronRow.getByRole('button', { name: 'Run now' }).click()
  await visible(page.getByRole('table', { name: 'Runs of nightly' }).locator('tr[data-run]', { hasText: 'overlap' }))
  await visible(cronRow.locator('.badge', { hasText: 'succeeded' }))
  if (scaleAndCron[2] !== 'POST runs') fail(`running scaleAndCron ${scaleAndCron[2]}`)
  await shot('app-processes')
  await a11y('cron jobs with runs')
  await cronRow.getByRole('button', { name: 'Remove nightly' }).click()
  const askCron = page.getByRole('dialog', { name: 'Remove nightly?' })
  await visible(askCron)
  await askCron.getByRole('button', { name: 'Cancel' }).click()
  if (scaleAndCron.length !== 3) fail('the cron job was removed without being asked')
  await cronRow.getByRole('button', { name: 'Remove nightly' }).click()
  await askCron.getByRole('button', { name: 'Remove nightly' }).click()
  await visible(page.getByText('No cron jobs'))
  if (scaleAndCron[3] !== 'DELETE cron') fail(`removing scaleAndCron ${scaleAndCron[3]}`)
  await page.unroute(`${appAPI}/formation`)
  await page.unroute(`${appAPI}/crons**`)

  step('a service app: its database; delete needs the slug typed')
  await page.getByRole('link', { name: 'Database' }).click()
  await visible(page.getByText('No database', { exact: true }))
  await a11y('database, none yet')
  await page.getByRole('button', { name: 'Create a database' }).click()
  await visible(page.getByTestId('database-status').locator('.badge'))
  await visible(page.getByRole('heading', { name: 'Dumps' }))
  await a11y('database')
  await page.getByRole('link', { name: 'Settings' }).click()
  const del = page.getByRole('button', { name: `Delete ${slug}-x` })
  if (!(await del.isDisabled())) fail('delete is enabled before the slug is typed')
  await page.getByLabel('App name').fill(`${slug}-x`)
  await del.click()
  await urlIs('/apps')
  await visible(page.locator('.card', { hasText: slug }))
  if ((await page.locator('.card', { hasText: `${slug}-x` }).count()) !== 0) fail('the deleted app is still listed')

  step('a 401 from the API shows sign-in where the page is')
  await page.route(CONSOLE + '/api/apps', (route) => route.fulfill({ status: 401, json: { error: 'unauthorized' } }))
  await page.reload()
  await visible(page.getByLabel('Email address'))
  if (new URL(page.url()).pathname !== '/apps') fail(`a 401 moved the page to ${page.url()}`)
  await page.unroute(CONSOLE + '/api/apps')
  await page.reload()
  await visible(page.locator('.card', { hasText: slug }))

  step('sign out: the session is revoked at the API, the cookie cleared, the console back at sign-in')
  await page.getByRole('button', { name: 'Sign out' }).click()
  await urlIs('/')
  await visible(page.getByLabel('Email address'))
  const after = await control('GET', `/live-sessions?email=${encodeURIComponent(EMAIL)}`)
  if (after.count !== 0) fail(`${after.count} live API sessions after sign-out`)
  if ((await context.cookies(CONSOLE)).some((c) => c.name === 'tori_console')) fail('the cookie outlived sign-out')
  // The old cookie, replayed, is nobody's any more.
  const replay = await fetch(CONSOLE + '/api/account', { headers: { Cookie: `tori_console=${sessionCookie.value}` } })
  if (replay.status !== 401) fail(`the old cookie still answers ${replay.status}`)

  step('signed out, an app\'s tab: sign-in in place, and back to the tab after the magic link')
  await signInShownAt(CONSOLE + `/apps/${slug}/env`)
  await signInHere()
  await urlIs(`/apps/${slug}/env`)
  await visible(page.getByText('No variables'))
  await titled(`Environment · ${slug}`)
  await noTokenInScript()

  step('no third-party request, no CSP violation, no page error; every POST has an Idempotency-Key')
  if (apiPosts < 8) fail(`only ${apiPosts} POSTs to the API were seen`)
  if (postsWithoutKey.length) fail(`POSTs without an Idempotency-Key: ${postsWithoutKey.join(', ')}`)
  if (changesWithoutCSRF.length) fail(`state-changing calls without a CSRF token: ${changesWithoutCSRF.join(', ')}`)
  if (direct.length) fail(`the page called the API directly: ${direct.join(', ')}`)
  if (strays.length) fail(`requests left the console: ${strays.join(', ')}`)
  console.log(`axe: no serious or critical violation on ${checked.length} pages: ${checked.join('; ')}`)
  if (cspErrors.length) fail(`CSP violations: ${cspErrors.join(' | ')}`)
  if (pageErrors.length) fail(`page errors: ${pageErrors.join(' | ')}`)
  console.log('console e2e: all steps passed')
} catch (e) {
  console.error(`FAILED at ${stepName}: ${e?.stack ?? e}`)
  try {
    await page.screenshot({ path: join(SHOTS, 'failure.png'), fullPage: true })
    console.error(`page at failure: ${page.url()} (screenshot failure.png)`)
  } catch {}
  process.exitCode = 1
} finally {
  await context.close()
  rmSync(profile, { recursive: true, force: true })
  rmSync(site, { recursive: true, force: true })
}
