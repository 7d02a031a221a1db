import { defineConfig } from 'vite'

// Preact's JSX through Vite's own transform: no framework plugin, nothing else to install.
export default defineConfig({
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
