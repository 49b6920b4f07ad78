// A Playwright fixture that gives each test a session of the mock of its
// own: the mock-session cookie, set on the browser context before the test
// runs, so every request the page makes to the mock (a fetch with
// credentials: 'include', a link, a form) names it, without a change to the
// application's code. The mock keeps each session's data, chaos rules and
// rate limit apart, so tests can run in parallel workers against one mock.
const base = require('@playwright/test');

const MOCK_URL = process.env.MOCK_URL;   // such as http://127.0.0.1:8080
const API_KEY = process.env.MOCK_API_KEY;

exports.test = base.test.extend({
  // session is the test's session name: 1 to 64 letters, digits, '.', '_'
  // or '-', unique per test and retry.
  session: async ({}, use, testInfo) => {
    const name = `pw-${testInfo.testId}-${testInfo.retry}`.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 64);
    await use(name);
  },
  // context carries the session's cookie for the mock's host.
  context: async ({ context, session }, use) => {
    await context.addCookies([{ name: 'mock-session', value: session, url: MOCK_URL }]);
    await use(context);
  },
  // mock is the admin API, scoped to the test's session: chaos rules put
  // here apply to this test's requests only.
  mock: async ({ playwright, session }, use) => {
    const admin = await playwright.request.newContext({
      baseURL: MOCK_URL,
      extraHTTPHeaders: { Authorization: `Bearer ${API_KEY}` },
    });
    const q = `?session=${encodeURIComponent(session)}`;
    await use({
      chaos: async (rules) => {
        const r = await admin.put('/__admin/chaos' + q, { data: { rules } });
        if (!r.ok()) throw new Error(`PUT /__admin/chaos: ${r.status()} ${await r.text()}`);
      },
    });
    // The session's data, rules and journal go with it.
    await admin.delete('/__admin/sessions/' + encodeURIComponent(session));
    await admin.dispose();
  },
});
exports.expect = base.expect;
exports.MOCK_URL = MOCK_URL;
exports.API_KEY = API_KEY;
