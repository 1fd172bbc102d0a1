import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The bench UI build: React 19 through esbuild's automatic JSX runtime (no plugin needed),
 * everything bundled locally so the UI works offline and under a strict CSP.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./src/ui', import.meta.url)),
  base: '/',
  publicDir: false,
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
    modulePreload: { polyfill: false },
    rollupOptions: {
      // zod's sources carry /* @__PURE__ */ comments in places rollup ignores; harmless, not ours to fix
      onwarn(warning, warn) {
        if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
