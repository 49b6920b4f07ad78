package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// hostile is a request body a caller may send: the journal shows it, and
// the page must show it as text.
const hostile = `{"quantity": 77, "note": "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">"}`

// TestDashboard drives the page in headless Chromium against a real mock,
// as a frontend developer would: log in, read the 64 pets, watch the
// app's PATCH arrive in the journal and the table, set a quantity, get the
// contract's 400 for a bad one, switch a fault and a forced answer on and
// off and see the app's next call change, reset the session.
func TestDashboard(t *testing.T) {
	s, srv := startMock(t, nil)
	tb := openTab(t)
	tb.logIn(srv)

	// The 64 fixture pets, paged 50 at a time, then all on one page.
	tb.waitFor("64 pets in 2 pages", `document.getElementById('range').textContent === '1–50 of 64'`)
	tb.choose("page-size", "100")
	tb.waitFor("64 rows", `document.querySelectorAll('#records-body tr[data-key]').length === 64`)
	if got := tb.text(`[...document.querySelectorAll('#records-head th')].map(th => th.textContent).join(' ')`); got != "petId▲ quantity status" {
		t.Errorf("columns = %q; want the schema's properties, sorted by the key", got)
	}

	// Sort by quantity, descending, with the keyboard on the header.
	tb.Do(chromedp.Focus(chromedp.CSS(`#records-head th:nth-child(2) button`)), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("ascending quantity", `document.querySelector('#records-head th:nth-child(2)').getAttribute('aria-sort') === 'ascending'`)
	tb.Do(chromedp.KeyEvent(" "))
	tb.waitFor("descending quantity", `document.querySelector('#records-head th:nth-child(2)').getAttribute('aria-sort') === 'descending'`)
	tb.waitFor("the largest quantity first", `(() => { const q = [...document.querySelectorAll('#records-body tr[data-key] input')].map(i => Number(i.value));
		return q.length === 64 && q.every((v, i) => i === 0 || q[i-1] >= v); })()`)

	// Filter by status.
	tb.choose("filter-status", "sold")
	tb.waitFor("sold pets only", `(() => { const s = [...document.querySelectorAll('#records-body tr[data-key] td:nth-child(3)')].map(td => td.textContent);
		return s.length > 0 && s.length < 64 && s.every(v => v === 'sold'); })()`)
	tb.choose("filter-status", "")
	tb.Do(chromedp.Click(chromedp.CSS(`#records-head th:nth-child(1) button`)))
	tb.waitFor("petId order again", `document.querySelector('#records-body tr[data-key]').dataset.key === '1' && document.querySelectorAll('#records-body tr[data-key]').length === 64`)

	// The app PATCHes pet 5, with markup in its body: the journal shows the
	// exchange and its verdict, the table the new quantity.
	if status, body := call(t, srv, "PATCH", "/v1/inventory/5", hostile); status != 200 {
		t.Fatalf("PATCH from outside: %d %s", status, body)
	}
	tb.waitFor("the PATCH in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('PATCH/v1/inventory/5200✓ valid'))`)
	tb.waitFor("77 in the table", `document.querySelector('#records-body tr[data-key="5"] input').value === '77'`)

	// Open it with the keyboard.
	tb.Do(chromedp.Focus(chromedp.CSS(`#entries li:first-child summary`)), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the exchange open", `document.querySelector('#entries li:first-child details').open && document.querySelector('#entries li:first-child .curl-text')`)
	var focus struct{ Style, Width string }
	tb.Eval(`(() => { const s = getComputedStyle(document.activeElement); return {style: s.outlineStyle, width: s.outlineWidth}; })()`, &focus)
	if focus.Style == "none" || focus.Width == "0px" {
		t.Errorf("the focused expander's outline = %+v; want a visible focus", focus)
	}
	var shown struct {
		Body, Curl, Verdict string
		Pwned               bool
		Elements            int
	}
	tb.Eval(`(() => { const d = document.querySelector('#entries li:first-child .detail');
		return {body: d.querySelectorAll('pre.body')[0].textContent, curl: d.querySelector('.curl-text').textContent,
			verdict: d.querySelector('.meta').textContent, pwned: 'pwned' in window,
			elements: document.querySelectorAll('#entries script, #entries img').length}; })()`, &shown)
	if !strings.Contains(shown.Body, `<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">`) || shown.Pwned || shown.Elements != 0 {
		t.Errorf("request body shown as %q (pwned %v, %d elements); want the markup as text, inert", shown.Body, shown.Pwned, shown.Elements)
	}
	if !strings.Contains(shown.Curl, "$INVENTORY_API_KEY") || strings.Contains(shown.Curl, apiKey) || !strings.Contains(shown.Curl, "-X PATCH") {
		t.Errorf("curl = %q; want the PATCH with the key left out", shown.Curl)
	}
	if !strings.Contains(shown.Verdict, "updateInventory") || !strings.Contains(shown.Verdict, "valid the answer keeps the contract") {
		t.Errorf("exchange = %q; want its operation and the contract's verdict", shown.Verdict)
	}
	// Space closes it again.
	tb.Do(chromedp.KeyEvent(" "))
	tb.waitFor("the exchange closed", `!document.querySelector('#entries li:first-child details').open`)

	// Set pet 3's quantity from the page, through the contract's update.
	quantity := `#records-body tr[data-key="3"] input`
	tb.Do(chromedp.Focus(chromedp.CSS(quantity)), chromedp.Evaluate[chromedp.Void](`document.querySelector('`+quantity+`').select()`),
		chromedp.KeyEvent("42"), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("42 written", `document.querySelector('`+quantity+`').dataset.original === '42'`)
	if got := stored(t, s, "", 3); !strings.Contains(got, `"quantity":42`) {
		t.Errorf("pet 3 in the store = %s; want quantity 42", got)
	}
	// A bad value: the contract's Error message, under the row; nothing written.
	tb.Do(chromedp.Focus(chromedp.CSS(quantity)), chromedp.Evaluate[chromedp.Void](`document.querySelector('`+quantity+`').select()`),
		chromedp.KeyEvent("-1"), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the 400", `document.querySelector('#records-body tr.row-error')`)
	msg := tb.text(`document.querySelector('#records-body tr.row-error').textContent`)
	if want := "petId 3: 400 invalid_body: quantity: -1 is out of range: below the minimum 0"; !strings.HasPrefix(msg, want) {
		t.Errorf("error shown = %q; want it to start %q", msg, want)
	}
	if got := tb.text(`document.querySelector('` + quantity + `').getAttribute('aria-invalid') + ' ' + document.activeElement.getAttribute('aria-label')`); got != "true quantity of petId 3" {
		t.Errorf("the bad input: %q; want it marked invalid and focused", got)
	}
	if got := stored(t, s, "", 3); !strings.Contains(got, `"quantity":42`) {
		t.Errorf("pet 3 after the refused write = %s; want 42 still", got)
	}
	tb.Do(chromedp.KeyEvent(kb.Escape))
	tb.waitFor("the edit undone", `!document.querySelector('#records-body tr.row-error') && document.querySelector('`+quantity+`').value === '42'`)

	// A fault on the list: the app's next call fails, and the journal says why.
	tb.choose("rule-op", "listInventory")
	tb.choose("rule-effect", "status:503")
	tb.Do(chromedp.Click(chromedp.CSS(`#rule-form button[type=submit]`)))
	tb.waitFor("the rule in force", `document.querySelector('#rules li') && document.querySelector('#rules li').textContent.startsWith('listInventory: status 503')`)
	if status, body := call(t, srv, "GET", "/v1/inventory", ""); status != 503 {
		t.Errorf("the app's list under the fault: %d %.100s; want 503", status, body)
	}
	tb.waitFor("the 503 in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('GET/v1/inventory503') && s.textContent.includes('fault status 503'))`)
	// The contract's verdict on it: the list's default response documents
	// every other error, 503 among them, so the answer keeps the contract.
	tb.Do(chromedp.Focus(chromedp.CSS(`#entries li:first-child summary`)), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the verdict", `document.querySelector('#entries li:first-child .meta')`)
	if got := tb.text(`document.querySelector('#entries li:first-child .meta').textContent`); !strings.Contains(got, "the answer keeps the contract") {
		t.Errorf("verdict on the documented 503 = %q; want it valid", got)
	}
	tb.Do(chromedp.KeyEvent(kb.Enter))
	tb.Do(chromedp.Click(chromedp.CSS(`#rules li button`)))
	tb.waitFor("the 503 rule off", `document.querySelectorAll('#rules li').length === 0`)

	// A fault that breaks the contract: the list's body cut in half.
	tb.choose("rule-effect", "fault:truncate")
	tb.Do(chromedp.Click(chromedp.CSS(`#rule-form button[type=submit]`)))
	tb.waitFor("the truncate rule in force", `document.querySelector('#rules li') && document.querySelector('#rules li').textContent.startsWith('listInventory: ')`)
	if _, body := call(t, srv, "GET", "/v1/inventory", ""); json.Valid([]byte(body)) {
		t.Errorf("the app's list under the truncate fault: %.100s; want a body cut short", body)
	}
	tb.waitFor("the cut list in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('GET/v1/inventory200') && s.textContent.includes('breaks the contract'))`)
	tb.Do(chromedp.Focus(chromedp.CSS(`#entries li:first-child summary`)), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the verdict's problems", `document.querySelector('#entries li:first-child .problems')`)
	if got := tb.text(`document.querySelector('#entries li:first-child .problems').textContent`); got == "" {
		t.Errorf("verdict on the cut list is empty; want the contract's complaint about it")
	}
	tb.screenshot("dashboard.png")
	tb.Do(chromedp.KeyEvent(kb.Enter))
	tb.Do(chromedp.Click(chromedp.CSS(`#rules li button`)))
	tb.waitFor("the rule off", `document.querySelectorAll('#rules li').length === 0`)
	if status, _ := call(t, srv, "GET", "/v1/inventory", ""); status != 200 {
		t.Errorf("the app's list after the fault is off: %d; want 200", status)
	}

	// A forced answer: the list's example "empty", for every caller.
	tb.choose("rule-effect", "example:empty")
	tb.Do(chromedp.Click(chromedp.CSS(`#rule-form button[type=submit]`)))
	tb.waitFor("the forced answer in force", `document.querySelector('#rules li') && document.querySelector('#rules li').textContent.startsWith('listInventory: example “empty”')`)
	if status, body := call(t, srv, "GET", "/v1/inventory", ""); status != 200 || body != "[]\n" {
		t.Errorf("the app's list under the forced answer: %d %q; want 200 []", status, body)
	}
	// The journal shows it as a forced answer, not as a fault.
	tb.waitFor("the forced list in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('GET/v1/inventory200') && s.textContent.includes('forced example=empty'))`)
	tb.Do(chromedp.Focus(chromedp.CSS(`#entries li:first-child summary`)), chromedp.KeyEvent(kb.Enter))
	tb.waitFor("the forced exchange open", `document.querySelector('#entries li:first-child .meta')`)
	if got := tb.text(`(() => { const m = document.querySelector('#entries li:first-child .meta');
		return [...m.querySelectorAll('dt')].filter(dt => ['Forced answer', 'Chaos'].includes(dt.textContent)).map(dt => dt.textContent + ': ' + dt.nextElementSibling.textContent).join('; '); })()`); got != "Forced answer: example=empty (a chaos rule); Chaos: none" {
		t.Errorf("the exchange under a rule's forced answer shows %q; want the example as its forced answer, and no other chaos", got)
	}
	tb.Do(chromedp.KeyEvent(kb.Enter))
	tb.Do(chromedp.Click(chromedp.ID("rules-clear")))
	tb.waitFor("every rule off", `document.querySelectorAll('#rules li').length === 0`)

	// Latency on the update: the app's next PATCH is late, and the journal
	// says by how much.
	tb.choose("rule-op", "updateInventory")
	tb.choose("rule-effect", "")
	checkPlaceholders(t, tb, 1280)
	tb.Do(chromedp.SendKeys(chromedp.ID("rule-latency"), "300ms"+kb.Enter))
	tb.waitFor("the latency in force", `document.querySelector('#rules li') && document.querySelector('#rules li').textContent.startsWith('updateInventory: latency 300ms')`)
	start := time.Now()
	if status, body := call(t, srv, "PATCH", "/v1/inventory/8", `{"quantity": 8}`); status != 200 || time.Since(start) < 300*time.Millisecond {
		t.Errorf("the app's PATCH under 300ms of latency: %d %s after %s", status, body, time.Since(start))
	}
	tb.waitFor("the late PATCH in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('PATCH/v1/inventory/8200') && s.textContent.includes('latency 300ms'))`)
	tb.Do(chromedp.Click(chromedp.CSS(`#rules li button`)))
	tb.waitFor("the latency off", `document.querySelectorAll('#rules li').length === 0`)

	// A rate limit, set from the page: shown, and the app's second call
	// within the minute is 429; a rate the mock cannot apply is refused
	// with its reason; then no limit.
	tb.waitFor("no limit shown", `document.getElementById('limit-now').textContent.startsWith('No rate limit')`)
	tb.Do(chromedp.SendKeys(chromedp.ID("limit-rate"), "10/h"+kb.Enter))
	tb.waitFor("the bad rate refused", `document.getElementById('limit-error').textContent.includes('the unit is s or m')`)
	tb.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById('limit-rate').value = ''`), chromedp.SendKeys(chromedp.ID("limit-rate"), "1/m"), chromedp.SendKeys(chromedp.ID("limit-burst"), "1"+kb.Enter))
	tb.waitFor("the limit shown", `document.getElementById('limit-now').textContent === 'In force: 1/m per API key and session, 1 at once; past it, 429 with Retry-After.'`)
	for i, want := range []int{200, 429} {
		if status, _ := call(t, srv, "GET", "/v1/inventory", ""); status != want {
			t.Errorf("the app's call %d under 1/m: %d; want %d", i+1, status, want)
		}
	}
	tb.waitFor("the 429 in the journal", `[...document.querySelectorAll('#entries summary')].some(s => s.textContent.includes('GET/v1/inventory429'))`)
	tb.Do(chromedp.Click(chromedp.ID("limit-off")))
	tb.waitFor("no limit again", `document.getElementById('limit-now').textContent.startsWith('No rate limit') && document.getElementById('limit-off').hidden`)
	if status, _ := call(t, srv, "GET", "/v1/inventory", ""); status != 200 {
		t.Errorf("the app's call with no limit: %d; want 200", status)
	}

	// Reset: the session holds its fixtures again.
	tb.Do(chromedp.Click(chromedp.ID("reset")))
	tb.waitFor("the fixtures again", `document.querySelector('#records-body tr[data-key="5"] input').value !== '77' && document.querySelector('`+quantity+`').value !== '42'`)
	if got := stored(t, s, "", 5); strings.Contains(got, `"quantity":77`) {
		t.Errorf("pet 5 after reset = %s; want its fixture", got)
	}

	// Another session: its own data and journal.
	call(t, srv, "PATCH", "/v1/inventory/7", `{"quantity": 707}`, "X-Mock-Session", "alice")
	tb.Do(chromedp.Focus(chromedp.ID("session")))
	tb.waitFor("alice among the sessions", `[...document.getElementById('session').options].some(o => o.value === 'alice')`)
	tb.choose("session", "alice")
	tb.waitFor("alice's pet 7", `document.querySelector('#records-body tr[data-key="7"] input').value === '707'`)
	tb.waitFor("alice's journal only", `document.querySelectorAll('#entries li').length === 1`)

	// A rule set while alice is shown is alice's own: her list fails, the
	// default session's does not, and the panel says whom it applies to.
	tb.choose("rule-op", "listInventory")
	tb.choose("rule-effect", "status:503")
	tb.Do(chromedp.Click(chromedp.CSS(`#rule-form button[type=submit]`)))
	tb.waitFor("alice's own rule", `document.querySelector('#rules li') && document.getElementById('controls-scope').textContent.startsWith('Rules of session alice only')`)
	if status, _ := call(t, srv, "GET", "/v1/inventory", "", "X-Mock-Session", "alice"); status != 503 {
		t.Errorf("alice's list under her rule: %d; want 503", status)
	}
	if status, _ := call(t, srv, "GET", "/v1/inventory", ""); status != 200 {
		t.Errorf("the default session's list under alice's rule: %d; want 200", status)
	}
	if got := s.Chaos().Rules; len(got) != 0 {
		t.Errorf("global rules after a rule set for alice: %+v; want none", got)
	}
	tb.Do(chromedp.Click(chromedp.ID("rules-clear")))
	tb.waitFor("alice's rules off", `document.querySelectorAll('#rules li').length === 0 && document.getElementById('controls-scope').textContent.includes('follows the global ones')`)

	checkAccessible(t, tb)
	checkKeyKept(t, tb, srv.URL)
	if got := tb.text(`document.getElementById('violations').hidden ? 'hidden' : 'shown'`); got != "hidden" {
		t.Errorf("violations panel %s; want it hidden, the mock has no GET /__admin/violations", got)
	}

	// A narrow window: nothing wider than the window but the table and the
	// journal's own scrolling areas.
	tb.Do(chromedp.EmulateViewport(400, 800))
	var wide []string
	tb.Eval(`[...document.querySelectorAll('body *')].filter(e => { const r = e.getBoundingClientRect();
		return r.width > 0 && r.right > window.innerWidth + 1 && !e.closest('.table-wrap, .entries'); }).map(e => e.tagName + '#' + e.id + '.' + e.className)`, &wide)
	if len(wide) > 0 {
		t.Errorf("at 400px wide, these stick out: %v", wide)
	}
	var scroll int
	tb.Eval(`document.documentElement.scrollWidth`, &scroll)
	if scroll > 400 {
		t.Errorf("at 400px wide, the page scrolls sideways: %d px", scroll)
	}
	checkPlaceholders(t, tb, 400)
	tb.screenshot("dashboard-narrow.png")
	tb.Do(chromedp.EmulateViewport(320, 800))
	tb.Eval(`document.documentElement.scrollWidth`, &scroll)
	if scroll > 320 {
		t.Errorf("at 320px wide, the page scrolls sideways: %d px", scroll)
	}
	checkPlaceholders(t, tb, 320)
	tb.screenshot("dashboard-320.png")
	tb.checkClean(srv.URL)
}

// checkPlaceholders fails the test where an input's placeholder is wider
// than the input shows, as the latency's "500ms or 50ms-1s" was.
func checkPlaceholders(t *testing.T, tb *tab, width int) {
	t.Helper()
	var cut []string
	tb.Eval(`(() => { const ctx = document.createElement('canvas').getContext('2d');
		return [...document.querySelectorAll('input[placeholder]')].filter(i => i.getClientRects().length > 0).filter(i => {
			const s = getComputedStyle(i);
			ctx.font = s.font;
			return ctx.measureText(i.placeholder).width > i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
		}).map(i => i.id + ': ' + i.placeholder); })()`, &cut)
	if len(cut) > 0 {
		t.Errorf("at %d px wide, placeholders cut short: %v", width, cut)
	}
}

// stored returns a pet as the store holds it.
func stored(t *testing.T, s interface{ Store() store.Store }, session string, id int64) string {
	t.Helper()
	if session == "" {
		session = store.DefaultSession
	}
	r, err := s.Store().Get(context.Background(), session, id)
	if err != nil {
		t.Fatal(err)
	}
	return string(r.JSON)
}

// checkAccessible checks that every control has a name a screen reader
// reads, and that the tab order starts where a reader starts.
func checkAccessible(t *testing.T, tb *tab) {
	t.Helper()
	var unnamed []string
	tb.Eval(`(() => {
		const name = (e) => {
			if (e.getAttribute('aria-label')) return e.getAttribute('aria-label');
			if (e.getAttribute('aria-labelledby')) return e.getAttribute('aria-labelledby').split(' ').map(id => document.getElementById(id)?.textContent || '').join(' ');
			if (e.id && document.querySelector('label[for="' + e.id + '"]')) return document.querySelector('label[for="' + e.id + '"]').textContent;
			if (e.closest('label')) return e.closest('label').textContent;
			if (['BUTTON', 'SUMMARY', 'A'].includes(e.tagName)) return e.textContent;
			return '';
		};
		return [...document.querySelectorAll('button, input, select, textarea, summary, a[href], [tabindex]:not([tabindex="-1"])')]
			.filter(e => e.getClientRects().length > 0 && !name(e).trim())
			.map(e => e.outerHTML.slice(0, 120));
	})()`, &unnamed)
	if len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %v", unnamed)
	}
	tb.Do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`),
		chromedp.Focus(chromedp.ID(`skip-main`)))
	var order []string
	for range 10 {
		order = append(order, tb.focused())
		tb.Do(chromedp.KeyEvent(kb.Tab))
	}
	want := []string{"skip-main", "skip-inventory", "skip-requests", "session", "reset", "logout", "rule-op", "rule-effect", "rule-latency", "rule-chance"}
	if !slices.Equal(order, want) {
		t.Errorf("tab order = %v; want %v, then the rest", order, want)
	}

	// From the inventory's filters to the live journal, past every row of
	// the table, with 50 rows and with 200: a person presses Tab, and Enter
	// on a link that skips to the requests.
	for _, rows := range []string{"50", "200"} {
		tb.choose("page-size", rows)
		tb.waitFor(rows+" rows a page", `document.querySelectorAll('#records-body tr[data-key]').length === Math.min(`+rows+`, Number(document.getElementById('range').textContent.split(' of ')[1].replaceAll(',', '')))`)
		tabs, path := tb.tabsTo("filter-status", "live")
		if tabs > 4 {
			t.Errorf("with %s rows a page, %d Tab presses from the status filter to the journal's Live box; want at most 4 (%v)", rows, tabs, path)
		}
		t.Logf("with %s rows a page, from the status filter to the Live box: %d Tab presses: %v", rows, tabs, path)
	}
	// And from the top of the page.
	tabs, path := tb.tabsTo("skip-main", "live")
	if tabs > 3 {
		t.Errorf("%d Tab presses from the top of the page to the journal's Live box; want at most 3 (%v)", tabs, path)
	}
	t.Logf("from the top of the page to the Live box: %d Tab presses: %v", tabs, path)
	tb.Do(chromedp.Focus(chromedp.ID("skip-inventory")), chromedp.KeyEvent(kb.Enter))
	landed := tb.focused()
	tb.Do(chromedp.KeyEvent(kb.Tab))
	if next := tb.focused(); landed != "inventory" || next != "filter-status" {
		t.Errorf("Enter on Skip to inventory, then Tab: focus on %q, then %q; want the inventory, then its status filter", landed, next)
	}
}

// focused names the focused element: its id, else its text.
func (tb *tab) focused() string {
	tb.t.Helper()
	return tb.text(`document.activeElement.id || document.activeElement.textContent.trim().slice(0, 40) || document.activeElement.tagName`)
}

// tabsTo focuses the element with id from and presses Tab until the
// element with id to has the focus, pressing Enter on a link that skips
// to the requests on the way, as a keyboard user would. It returns the
// Tab presses and where each one went.
func (tb *tab) tabsTo(from, to string) (int, []string) {
	tb.t.Helper()
	tb.Do(chromedp.Focus(chromedp.ID(from)))
	var path []string
	for tabs := 1; tabs <= 400; tabs++ {
		tb.Do(chromedp.KeyEvent(kb.Tab))
		at := tb.focused()
		path = append(path, at)
		if at == to {
			return tabs, path
		}
		if at == "skip-requests" || at == "Skip to requests" {
			tb.Do(chromedp.KeyEvent(kb.Enter))
			path = append(path, "Enter→"+tb.focused())
		}
	}
	tb.t.Fatalf("400 Tab presses from #%s never reached #%s: %v", from, to, path[len(path)-20:])
	return 0, nil
}

// checkKeyKept checks where the admin key went: into session storage and
// the Authorization header of every admin call, and nowhere else.
func checkKeyKept(t *testing.T, tb *tab, origin string) {
	t.Helper()
	var where struct {
		Session, HTML, Cookie string
		Local                 int
	}
	tb.Eval(`({session: sessionStorage.getItem('inventory-mock.admin-key'), html: document.documentElement.outerHTML,
		cookie: document.cookie, local: localStorage.length})`, &where)
	if where.Session != adminKey || strings.Contains(where.HTML, adminKey) || where.Cookie != "" || where.Local != 0 {
		t.Errorf("the key: in session storage %v, in the DOM %v, cookies %q, local storage %d; want session storage only",
			where.Session == adminKey, strings.Contains(where.HTML, adminKey), where.Cookie, where.Local)
	}
	calls := 0
	for _, r := range tb.Requests() {
		if strings.Contains(r.URL, adminKey) {
			t.Errorf("the key is in a URL: %s", r.URL)
		}
		path := strings.TrimPrefix(r.URL, origin)
		if !strings.HasPrefix(path, "/__admin/") || path == "/__admin/" || strings.HasPrefix(path, "/__admin/assets/") {
			continue
		}
		calls++
		if got := fmt.Sprint(r.Headers["Authorization"]); got != "Bearer "+adminKey {
			t.Errorf("%s %s went with Authorization %q; want the admin key as a bearer token", r.Method, path, got)
		}
	}
	if calls < 10 {
		t.Errorf("the page made %d admin calls; want at least 10", calls)
	}
}

// TestDashboardWithoutKey: without the key the page is a prompt and
// nothing else; a wrong key or one that stops working brings the prompt
// back with the mock's reason; the page loads nothing from another origin.
func TestDashboardWithoutKey(t *testing.T) {
	_, srv := startMock(t, nil)
	tb := openTab(t)
	tb.Do(chromedp.Navigate(srv.URL + "/__admin/"))
	tb.waitFor("the key prompt", `document.activeElement && document.activeElement.id === 'key'`)
	var visible []string
	tb.Eval(`[...document.querySelectorAll('main > *, header .controls')].filter(e => e.getClientRects().length > 0).map(e => e.id)`, &visible)
	if !slices.Equal(visible, []string{"login"}) {
		t.Errorf("without a key the page shows %v; want the prompt alone", visible)
	}
	for _, r := range tb.Requests() {
		if p := strings.TrimPrefix(r.URL, srv.URL); p != "/__admin/" && !strings.HasPrefix(p, "/__admin/assets/") {
			t.Errorf("without a key the page called %s %s", r.Method, p)
		}
	}

	// An empty key, then a wrong one: the prompt stays, with the reason.
	tb.Do(chromedp.SendKeys(chromedp.ID("key"), kb.Enter))
	tb.waitFor("a word about the empty key", `document.getElementById('login-error').textContent === 'Give the admin key.'`)
	tb.Do(chromedp.SendKeys(chromedp.ID("key"), apiKey+kb.Enter))
	tb.waitFor("the mock's reason", `document.getElementById('login-error').textContent.includes('the key sent is an API key')`)
	var left struct {
		Stored any
		App    bool
		Value  string
	}
	tb.Eval(`({stored: sessionStorage.getItem('inventory-mock.admin-key'), app: !document.getElementById('app').hidden, value: document.getElementById('key').value})`, &left)
	if left.Stored != nil || left.App || left.Value != "" {
		t.Errorf("after a refused key: stored %v, dashboard shown %v, input %q; want nothing kept", left.Stored, left.App, left.Value)
	}
	// A key no header can carry is the key's fault, not the network's.
	tb.Do(chromedp.SendKeys(chromedp.ID("key"), "ключ"+kb.Enter))
	tb.waitFor("a word about the key", `document.getElementById('login-error').textContent !== '' && !document.getElementById('login-error').textContent.includes('the key sent is an API key')`)
	if got := tb.text(`document.getElementById('login-error').textContent`); !strings.Contains(got, "an HTTP header cannot carry") || strings.Contains(got, "not answering") || strings.Contains(got, "ключ") {
		t.Errorf("a key in Cyrillic: %q; want it said that a header cannot carry it, without the key", got)
	}
	tb.Eval(`({stored: sessionStorage.getItem('inventory-mock.admin-key'), app: !document.getElementById('app').hidden, value: document.getElementById('key').value})`, &left)
	if left.Stored != nil || left.App {
		t.Errorf("after a key no header carries: stored %v, dashboard shown %v; want nothing kept", left.Stored, left.App)
	}

	// A key that stops working (the mock restarted with another): the next
	// call's 401 brings the prompt back and clears the data.
	tb.logIn(srv)
	tb.Do(chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem('inventory-mock.admin-key', 'not-the-key')`))
	tb.waitFor("the prompt again", `!document.getElementById('login').hidden && document.getElementById('login-error').textContent.includes('not accepted')`)
	var rows int
	tb.Eval(`document.querySelectorAll('#records-body tr, #entries li').length`, &rows)
	if rows != 0 {
		t.Errorf("after the key stopped working, %d rows of data remain in the page", rows)
	}
	tb.checkClean(srv.URL)

	// The mock stopped: the network's fault, said so.
	srv.Close()
	tb.Do(chromedp.SendKeys(chromedp.ID("key"), adminKey+kb.Enter))
	tb.waitFor("a word about the mock", `document.getElementById('login-error').textContent === 'The mock is not answering. Is it still running?'`)
}

// TestDashboardViolations: where the mock answers GET /__admin/violations
// (the validating proxy), the page shows the findings, as text.
func TestDashboardViolations(t *testing.T) {
	findings := `[{"id": "v1", "operation": "updateInventory", "rule": "response-body", "where": "response", "path": "$.quantity",
		"message": "quantity: got string <b>bold</b>, want integer", "count": 3, "firstSeen": "2026-11-01T10:00:00Z", "lastSeen": "2026-11-01T10:05:00Z",
		"example": {"method": "PATCH", "url": "/v1/inventory/3", "status": 200,
			"request": {"headers": {"Content-Type": ["application/json"]}, "body": "{\"quantity\": 3}"},
			"response": {"headers": {"Content-Type": "application/json"}, "body": "{\"quantity\": \"3\"}"}}}]`
	_, srv := startMock(t, func(mock http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/", mock)
		mux.HandleFunc("GET /__admin/violations", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+adminKey {
				http.Error(w, `{"code":"unauthorized","message":"no","status":401}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, findings)
		})
		return mux
	})
	tb := openTab(t)
	tb.logIn(srv)
	tb.waitFor("the violations panel", `!document.getElementById('violations').hidden && document.querySelector('#findings summary')`)
	tb.Do(chromedp.Click(chromedp.CSS(`#findings summary`)))
	got := tb.text(`document.getElementById('findings').textContent`)
	for _, want := range []string{"3×", "updateInventory", "response-body", "quantity: got string <b>bold</b>, want integer", `{"quantity": "3"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the violations panel shows %q; want %q in it", got, want)
		}
	}
	var bold int
	tb.Eval(`document.querySelectorAll('#findings b').length`, &bold)
	if bold != 0 {
		t.Errorf("a finding's message was parsed as HTML")
	}
	tb.checkClean(srv.URL)
}

// TestDashboardManyPets: 100,000 pets are paged, sorted and filtered by
// the mock; the page never asks for more than one page of them.
func TestDashboardManyPets(t *testing.T) {
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	shape, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	pets, err := fixtures.Generate(shape, 100_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, srv := startMock(t, nil, pets...)
	tb := openTab(t)
	tb.logIn(srv)
	tb.waitFor("100,000 pets", `document.getElementById('range').textContent === '1–50 of 100,000'`)
	tb.Do(chromedp.Click(chromedp.ID("next")))
	tb.waitFor("the second page", `document.getElementById('range').textContent === '51–100 of 100,000' && document.querySelector('#records-body tr[data-key]').dataset.key === '51'`)
	tb.Do(chromedp.Click(chromedp.CSS(`#records-head th:nth-child(1) button`)))
	tb.waitFor("the last pet first", `document.querySelector('#records-body tr[data-key]').dataset.key === '100000'`)
	tb.choose("filter-status", "pending")
	tb.Do(chromedp.Click(chromedp.CSS(`#records-head th:nth-child(2) button`)))
	tb.waitFor("pending pets by quantity", `(() => { const rows = [...document.querySelectorAll('#records-body tr[data-key]')];
		const q = rows.map(r => Number(r.querySelector('input').value));
		return rows.length === 50 && rows.every(r => r.textContent.includes('pending')) && q.every((v, i) => i === 0 || q[i-1] <= v)
			&& /^1–50 of [0-9,]+$/.test(document.getElementById('range').textContent); })()`)
	tb.Do(chromedp.SendKeys(chromedp.ID("find"), "99999"))
	tb.waitFor("pet 99999 found", `document.querySelectorAll('#records-body tr[data-key]').length <= 1 && /of [01]$/.test(document.getElementById('range').textContent)`)

	// A key that is no number: the mock's 400, and no rows or range left
	// from the query before it.
	tb.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById('find').select()`), chromedp.KeyEvent("abc"))
	tb.waitFor("the 400", `document.getElementById('record-error').textContent.includes('petId is a number; "abc" is not')`)
	var stale struct {
		Rows       int
		Range      string
		Prev, Next bool
	}
	tb.Eval(`({rows: document.querySelectorAll('#records-body tr').length, range: document.getElementById('range').textContent,
		prev: document.getElementById('prev').disabled, next: document.getElementById('next').disabled})`, &stale)
	if stale.Rows != 0 || stale.Range != "" || !stale.Prev || !stale.Next {
		t.Errorf("after the 400: %d rows, range %q, previous disabled %v, next disabled %v; want no rows, no range, no paging", stale.Rows, stale.Range, stale.Prev, stale.Next)
	}
	tb.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById('find').select()`), chromedp.KeyEvent(kb.Backspace))
	tb.waitFor("the pending pets again", `/^1–50 of [0-9,]+$/.test(document.getElementById('range').textContent) && document.getElementById('record-error').textContent === ''`)

	// The app lists 100,000 pets, compressed and not: the journal keeps the
	// start of the plain one, and of the compressed one a note, which the
	// page shows as it is, not as the start of the body.
	for _, encoding := range []string{"identity", "gzip"} {
		status, _ := call(t, srv, "GET", "/v1/inventory", "", "Accept-Encoding", encoding)
		if status != 200 {
			t.Fatalf("GET /v1/inventory (%s): %d", encoding, status)
		}
		want := lastEntry(t, srv)
		tb.waitFor("the "+encoding+" list in the journal", `document.querySelector('#entries li:first-child') && document.querySelector('#entries li:first-child').dataset.id === `+js(want.ID))
		tb.Do(chromedp.Click(chromedp.CSS(`#entries li:first-child summary`)))
		tb.waitFor("the exchange open", `document.querySelector('#entries li:first-child pre.body')`)
		got := tb.text(`document.querySelectorAll('#entries li:first-child pre.body')[1].textContent`)
		switch {
		case encoding == "gzip" && got != want.Response.Body:
			t.Errorf("the compressed list's body shows %q; want the journal's note %q as it is", got, want.Response.Body)
		case encoding == "identity" && got != want.Response.Body+fmt.Sprintf("\n… (cut short: %s bytes in all)", thousands(want.Response.Bytes)):
			t.Errorf("the plain list's body shows …%q; want the start the journal keeps, and its size", got[max(0, len(got)-80):])
		}
		tb.Do(chromedp.Click(chromedp.CSS(`#entries li:first-child summary`)))
	}
	for _, r := range tb.Requests() {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(u.Path, "/v1/") || (u.Path == "/__admin/records" && u.Query().Get("limit") != "50") {
			t.Errorf("the page asked for %s; want pages of 50 from /__admin/records only", r.URL)
		}
	}
	tb.checkClean(srv.URL)
}

// lastEntry returns the newest entry of the default session's journal,
// as the admin API gives it.
func lastEntry(t *testing.T, srv *httptest.Server) (e struct {
	ID       string
	Response struct {
		Body  string
		Bytes int
	}
}) {
	t.Helper()
	r, _ := http.NewRequest("GET", srv.URL+"/__admin/requests?limit=1", nil)
	r.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil || len(entries) != 1 {
		t.Fatalf("GET /__admin/requests?limit=1: %v, %d entries", err, len(entries))
	}
	if err := json.Unmarshal(entries[0], &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// thousands writes n as the page does: 1,234,567.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestPageHeaders checks what the page and its assets are served with,
// without a browser.
func TestPageHeaders(t *testing.T) {
	_, srv := startMock(t, nil)
	for _, tt := range []struct {
		path, contentType string
		status            int
	}{
		{"/__admin/", "text/html; charset=utf-8", 200},
		{"/__admin/assets/dashboard.js", "text/javascript; charset=utf-8", 200},
		{"/__admin/assets/dashboard.css", "text/css; charset=utf-8", 200},
		{"/__admin/assets/icon.svg", "image/svg+xml", 200},
		{"/__admin/assets/nope.js", "application/json", 404},
		{"/__admin/assets/", "application/json", 404},
	} {
		resp, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.contentType {
			t.Errorf("GET %s: %d %s; want %d %s", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.contentType)
		}
		if tt.status != 200 {
			continue
		}
		for name, want := range map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
		} {
			if got := resp.Header.Get(name); got != want {
				t.Errorf("GET %s: %s = %q; want %q", tt.path, name, got, want)
			}
		}
	}
	// An unchanged asset costs a 304.
	resp, _ := http.Get(srv.URL + "/__admin/assets/dashboard.js")
	resp.Body.Close()
	r, _ := http.NewRequest("GET", srv.URL+"/__admin/assets/dashboard.js", nil)
	r.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("GET with If-None-Match: %d; want 304", again.StatusCode)
	}
	// /__admin redirects to the page; other methods are refused.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := client.Get(srv.URL + "/__admin"); err != nil || resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/__admin/" {
		t.Errorf("GET /__admin: %v %v; want a redirect to /__admin/", resp, err)
	}
	if resp, err := http.Post(srv.URL+"/__admin/", "text/plain", strings.NewReader("x")); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /__admin/: %v %v; want 405", resp, err)
	}
	// The page holds no key, no data, no inline script or style.
	resp, err = http.Get(srv.URL + "/__admin/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	for _, leak := range []string{adminKey, apiKey, "petId", "style="} {
		if strings.Contains(page, leak) {
			t.Errorf("the page holds %q", leak)
		}
	}
	if handler := regexp.MustCompile(`\son[a-z]+=`).FindString(page); handler != "" {
		t.Errorf("the page holds an inline event handler: %q", handler)
	}
	if strings.Count(page, "<script") != 1 || !strings.Contains(page, `<script type="module" src="assets/dashboard.js"></script>`) || !strings.Contains(page, "Pet Store Inventory Service") {
		t.Errorf("page = %.300s; want the contract's title and one script, from the assets", page)
	}
}
