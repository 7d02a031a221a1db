import { defineConfig } from 'vite'

// Preact's JSX through Vite's own transform: no framework plugin, nothing else to install.
// Vite 8 (rolldown): Vite 7's rollup lists platform packages this machine's npm registry does
// not serve, and `npm ci` then refuses its lockfile. Vite 8 needs npm 11, which
// scripts/build.sh makes sure of.
export default defineConfig({
  // `npm run dev` sends the page's /api/ and /session calls to the console's Go server (which
  // holds the session): run it with CONSOLE_ADDR=127.0.0.1:5176 and the default CONSOLE_URL,
  // so the Origin it checks is this dev server's.
  server: {
    proxy: {
      '/api': process.env.CONSOLE_SERVER ?? 'http://127.0.0.1:5176',
      '/session': process.env.CONSOLE_SERVER ?? 'http://127.0.0.1:5176',
    },
  },
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
