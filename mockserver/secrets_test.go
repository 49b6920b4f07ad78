package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestKeysNeverShown sends the configured keys every way a client could,
// and checks that neither the access log nor the journal shows them, nor
// a start of one long enough to guess it from.
func TestKeysNeverShown(t *testing.T) {
	const apiKey, adminKey = "sekrit-key-123", "adm-secret-456"
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.APIKeys = []string{apiKey}
		c.AdminKey = adminKey
		c.JournalSize = 50
		c.JournalBodyLimit = 19
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	auth := "Bearer " + apiKey
	requests := []struct {
		name   string
		r      req
		status int
	}{
		{"key in the path", req{method: "GET", path: "/v1/inventory/" + apiKey, auth: auth}, 405},
		{"key percent-encoded in the query", req{method: "GET", path: "/v1/inventory?k=%73ekrit-key-123", auth: auth}, 200},
		{"admin key in the query", req{method: "GET", path: "/v1/inventory?k=" + adminKey, auth: auth}, 200},
		{"key as the session", withHeader(req{method: "GET", path: "/v1/inventory", auth: auth}, SessionHeader, apiKey), 400},
		{"key as the request id", withHeader(req{method: "GET", path: "/v1/inventory", auth: auth}, httpapi.RequestIDHeader, apiKey), 200},
		{"key across the journal's body limit", req{method: "PATCH", path: "/v1/inventory/3", auth: auth, body: `{"k":"` + apiKey + `","quantity":5}`}, 200},
		{"key in a value the error echoes", req{method: "PATCH", path: "/v1/inventory/3", auth: auth, body: `{"quantity":"` + apiKey + `"}`}, 400},
		{"wrong key", req{method: "GET", path: "/v1/inventory", auth: "Bearer " + apiKey + "x"}, 401},
	}
	// The mock's controls: a key in any of their values is refused without
	// being quoted, so no Error message shows it either.
	list := req{method: "GET", path: "/v1/inventory", auth: auth}
	update := req{method: "PATCH", path: "/v1/inventory/3", auth: auth, body: `{"quantity":5}`}
	admin := "Bearer " + adminKey
	controls := []struct {
		name   string
		r      req
		status int
	}{
		{"key as a Prefer example", withHeader(list, "Prefer", "example="+apiKey), 400},
		{"admin key as a Prefer example", withHeader(list, "Prefer", "example="+adminKey), 400},
		{"key as a Prefer example with a code", withHeader(update, "Prefer", "code=200, example="+apiKey), 400},
		{"key percent-encoded as a Prefer example", withHeader(list, "Prefer", "example=%73ekrit-key-123"), 400},
		{"key quoted as a Prefer example", withHeader(list, "Prefer", `example="`+apiKey+`"`), 400},
		{"key as a Prefer code", withHeader(update, "Prefer", "code="+apiKey), 400},
		{"key as a Prefer delay", withHeader(list, "Prefer", "delay="+apiKey), 400},
		{"key as a preference", withHeader(list, "Prefer", apiKey+"=1"), 400},
		{"key in a second Prefer header", withHeader(withHeader(list, "Prefer", "delay=1"), "Prefer", "example="+apiKey), 400},
		{"key as a session with a Prefer", withHeader(withHeader(list, "Prefer", "example=empty"), SessionHeader, apiKey), 400},
		{"key as the session of a reset", req{method: "POST", path: "/__admin/reset?session=" + apiKey, auth: admin}, 400},
		{"key as the session of a list of records", req{method: "GET", path: "/__admin/records?session=" + apiKey, auth: admin}, 400},
		{"key as a chaos rule's operation", req{method: "PUT", path: "/__admin/chaos", auth: admin, body: `{"rules":[{"operation":"` + apiKey + `","fault":"reset"}]}`}, 400},
		{"key as a chaos rule's example", req{method: "PUT", path: "/__admin/chaos", auth: admin, body: `{"rules":[{"operation":"listInventory","example":"` + adminKey + `"}]}`}, 400},
		{"key as a chaos rule's latency", req{method: "PUT", path: "/__admin/chaos", auth: admin, body: `{"rules":[{"latency":"` + apiKey + `"}]}`}, 400},
	}
	var answers strings.Builder
	for _, tt := range controls {
		got := serve(t, s, tt.r)
		if got.status != tt.status {
			t.Errorf("%s: status %d; want %d: %s", tt.name, got.status, tt.status, got.body)
		}
		answers.Write(got.body)
	}
	for _, tt := range requests {
		if got := serve(t, s, tt.r); got.status != tt.status {
			t.Errorf("%s: status %d; want %d: %s", tt.name, got.status, tt.status, got.body)
		}
	}
	got := serve(t, s, req{method: "GET", path: "/__admin/requests?limit=100", auth: admin})
	sessions := serve(t, s, req{method: "GET", path: "/__admin/sessions", auth: admin})
	shown := map[string]string{
		"the access log": logs.String(), "the journal": string(got.body), "the sessions": string(sessions.body),
		"the Error messages of the controls": answers.String(),
	}
	for what, text := range shown {
		for _, key := range []string{apiKey, adminKey} {
			for n := len(key); n >= 8; n-- {
				if strings.Contains(text, key[:n]) {
					t.Errorf("%s shows %q, the first %d characters of a key:\n%s", what, key[:n], n, text)
					break
				}
			}
		}
	}
}

// TestJournalNeedsAKey checks that requests without a key cannot make
// sessions in the journal, push a team's session out, or make it hold
// more than its bounds: they are kept in the default session, with at
// most 4 KiB of headers each.
func TestJournalNeedsAKey(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 5; c.Sessions.MaxSessions = 3 })
	serve(t, s, withHeader(req{method: "GET", path: "/v1/inventory"}, SessionHeader, "team"))
	big := strings.Repeat("x", 60<<10)
	for i := range 10 {
		r := withHeader(req{method: "GET", path: "/v1/inventory", auth: "-"}, SessionHeader, "evil"+strings.Repeat("i", i))
		serve(t, s, withHeader(r, "X-Padding", big))
	}
	if team := journalOf(t, s, "?session=team"); len(team) != 1 {
		t.Errorf("the team's session holds %d entries after requests without a key; want its 1", len(team))
	}
	all := journalOf(t, s, "")
	raw, _ := json.Marshal(all)
	if len(all) != 6 || len(raw) > 6*(8<<10) {
		t.Errorf("journal = %d entries, %d bytes; want the team's 1 and 5 in the default session, headers cut", len(all), len(raw))
	}
	for _, e := range all {
		if e.Status == http.StatusUnauthorized && (e.Session != "default" || !e.Request.HeadersCut) {
			t.Errorf("an entry without a key: session %q, headers cut %v; want default, true", e.Session, e.Request.HeadersCut)
		}
	}
}

// TestKeyAsMethod sends the key as the request's method (curl -X KEY, a
// slip of the fingers): the access log, the journal entry and its curl
// line show the request, with the key replaced.
func TestKeyAsMethod(t *testing.T) {
	const apiKey = "sekrit-key-123"
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.APIKeys = []string{apiKey}
		c.JournalSize = 10
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	if got := serve(t, s, req{method: apiKey, path: "/v1/inventory", auth: "Bearer " + apiKey}); got.status != http.StatusMethodNotAllowed {
		t.Fatalf("status %d; want 405: %s", got.status, got.body)
	}
	var line map[string]any
	for _, l := range jsonLogLines(t, &logs) {
		if l["msg"] == "request" {
			line = l
		}
	}
	if line == nil || line["method"] != "$INVENTORY_API_KEY" {
		t.Errorf("access line = %v; want method $INVENTORY_API_KEY", line)
	}
	var entries []journalEntry
	if err := json.Unmarshal(serve(t, s, req{method: "GET", path: "/__admin/requests", auth: "Bearer " + apiKey}).body, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("journal = %+v; want the one request", entries)
	}
	e := entries[0]
	if e.Method != "$INVENTORY_API_KEY" || !strings.HasPrefix(e.Curl, `curl -sS -i -X "$INVENTORY_API_KEY" `) {
		t.Errorf("journal entry method %q, curl %q; want the key as $INVENTORY_API_KEY in both", e.Method, e.Curl)
	}
	for what, text := range map[string]string{"the access log": logs.String(), "the journal entry": fmt.Sprint(e)} {
		if strings.Contains(text, apiKey) {
			t.Errorf("%s shows the key: %s", what, text)
		}
	}
}
