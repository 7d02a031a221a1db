import { defineConfig } from 'vite'

// Preact's JSX through Vite's own transform: no framework plugin, nothing else to install.
// Vite 8 (rolldown): Vite 7's rollup lists platform packages this machine's npm registry does
// not serve, and `npm ci` then refuses its lockfile. Vite 8 needs npm 11, which
// scripts/build.sh makes sure of.
export default defineConfig({
  plugins: [
    {
      // `npm run dev` answers /config.json as bin/console does, from BASE_URL.
      name: 'tori-config-json',
      configureServer(server) {
        server.middlewares.use('/config.json', (_req, res) => {
          res.setHeader('Content-Type', 'application/json')
          res.end(JSON.stringify({ baseUrl: process.env.BASE_URL ?? 'http://127.0.0.1:8080' }))
        })
      },
    },
  ],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    // Everything is a file of the console's own origin: the CSP allows no inline script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
})
