// Playwright's configuration for the example. The mock and the page under
// test are started by cmd/inventory-mock's TestPlaywright, which passes
// their addresses in MOCK_URL and APP_URL; Chromium is Debian's
// (CHROMIUM, else /usr/bin/chromium): Playwright downloads no browser here.
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: '.',
  testMatch: '*.spec.js',
  fullyParallel: true, // the tests of one file run in parallel workers too
  forbidOnly: true,
  retries: 0,          // a flaky pass would hide cross-talk
  reporter: [['list']],
  timeout: 30_000,
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      // As root (CI containers), Chromium runs only without its sandbox.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    },
  },
});
