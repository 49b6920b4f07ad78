// Eight tests, run in parallel workers, each PATCH the same pet from a page
// on another origin (APP_URL) than the mock's, and force a fault for
// themselves. Each asserts only its own values: if one test's write or
// fault leaked into another's session, that other test would fail.
const { test, expect, MOCK_URL, API_KEY } = require('./fixtures');

// call makes the page under test send a request to the mock, as the
// application's code would: fetch with credentials: 'include', so the
// browser sends the mock-session cookie across origins (the mock allows it
// for the origins given with --cors-origin).
async function call(page, method, path, body, credentials = 'include') {
  return page.evaluate(async ({ url, method, body, key, credentials }) => {
    const r = await fetch(url, {
      method,
      credentials,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: await r.json() };
  }, { url: MOCK_URL + path, method, body, key: API_KEY, credentials });
}

for (let i = 0; i < 8; i++) {
  test(`worker's own session ${i}`, async ({ page, mock, session }) => {
    await page.goto(process.env.APP_URL + '/app.html');
    expect(new URL(page.url()).origin).not.toBe(new URL(MOCK_URL).origin);

    // Without the cookie, the mock (run with --require-session) refuses.
    const bare = await call(page, 'GET', '/v1/inventory', null, 'omit');
    expect(bare.status).toBe(400);
    expect(bare.body.code).toBe('missing_session');

    // Our write, read back after the other workers wrote theirs.
    const mine = 1000 + i;
    const wrote = await call(page, 'PATCH', '/v1/inventory/3', { quantity: mine });
    expect(wrote.status).toBe(200);
    expect(wrote.body.quantity).toBe(mine);
    await page.waitForTimeout(300);
    const list = await call(page, 'GET', '/v1/inventory');
    expect(list.status).toBe(200);
    expect(list.body.find((p) => p.petId === 3).quantity).toBe(mine);

    // Our fault: our own status, for our session only.
    const status = 500 + i;
    await mock.chaos([{ operation: 'updateInventory', fault: 'status', status }]);
    await page.waitForTimeout(300);
    const refused = await call(page, 'PATCH', '/v1/inventory/3', { quantity: 1 });
    expect(refused.status).toBe(status);
    expect(refused.body.status).toBe(status);
    const after = await call(page, 'GET', '/v1/inventory');
    expect(after.status).toBe(200);
    expect(after.body.find((p) => p.petId === 3).quantity).toBe(mine);

    // The journal of our session holds our requests only.
    const journal = await page.request.get(`${MOCK_URL}/__admin/requests?session=${session}`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    const entries = await journal.json();
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.session === session)).toBe(true);
  });
}
