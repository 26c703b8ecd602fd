// Builds the dashboard's page into dist/dashboard/, which the dashboard command serves
// (src/cli/dashboardServer.ts) and the npm package ships. Relative asset paths, no external URL: the page
// needs nothing from the internet at run time.
import { fileURLToPath, URL } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    // No source maps: the shipped page is small, and its sources are in the repository.
    sourcemap: false,
    // Chromium, Firefox and Safari of the last years: no polyfills.
    target: 'es2022',
  },
});
