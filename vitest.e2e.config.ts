import { defineConfig } from 'vitest/config';

/** Browser tests (playwright-core driving Debian's chromium); `npm run test:e2e` builds the UI first. */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
