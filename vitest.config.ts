import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'packages/*/test/**/*.test.ts'],
    exclude: ['test/e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: one worker on the 2-core CI machine, where most tests
    // wait on child processes and sockets rather than compute
    maxWorkers: availableParallelism(),
  },
});
