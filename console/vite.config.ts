import { defineConfig } from 'vite'

// Preact's JSX through Vite's own esbuild transform: no framework plugin. Vite 7, not 8: Vite 8
// does not install where the machine's npm is still 10 (its upgrade to 11 can fail at start).
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
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    // Everything is a file of the console's own origin: the CSP allows no inline script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
})
