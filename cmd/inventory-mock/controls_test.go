package main

import (
	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// callDev sends one request to the mock at addr with the development key;
// session "" names none. It reports the status, the body and how long the
// answer took.
func callDev(t *testing.T, addr, method, path, session, body string) (int, string, time.Duration) {
	t.Helper()
	status, b, took := send(t, httpapi.DevKey, method, "http://"+addr+path, session, body)
	return status, string(b), took
}

// sessionNames lists the sessions the mock at addr keeps.
func sessionNames(t *testing.T, addr string) []string {
	t.Helper()
	_, body, _ := callDev(t, addr, "GET", "/__admin/sessions", "", "")
	var infos []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &infos); err != nil {
		t.Fatalf("sessions: %v: %s", err, body)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	return names
}

// A loggedRequest is what the tests read of a journal entry.
type loggedRequest struct {
	Session string
	Status  int
	Fault   string
	Request struct {
		Body      string
		Bytes     int
		Truncated bool
	}
	Response struct {
		Body      string
		Truncated bool
	}
}

// journal reads the mock's journal at addr, newest first.
func journal(t *testing.T, addr, query string) []loggedRequest {
	t.Helper()
	_, body, _ := callDev(t, addr, "GET", "/__admin/requests"+query, "", "")
	var entries []loggedRequest
	if err := json.Unmarshal([]byte(body), &entries); err != nil {
		t.Fatalf("journal: %v: %s", err, body)
	}
	return entries
}

// fromFlagsOrEnv runs a test twice: with the settings as flags, and as
// their INVENTORY_MOCK_* variables.
func fromFlagsOrEnv(t *testing.T, settings map[string]string, test func(t *testing.T, addr string)) {
	t.Helper()
	for _, how := range []string{"flags", "environment"} {
		t.Run(how, func(t *testing.T) {
			var args []string
			vars := map[string]string{}
			for name, v := range settings {
				if how == "flags" {
					args = append(args, "--"+name, v)
				} else {
					vars[envName(name)] = v
				}
			}
			addr, _ := start(t, args, env(vars), io.Discard)
			test(t, addr)
		})
	}
}

func TestChaosFlagsTakeEffect(t *testing.T) {
	settings := map[string]string{
		"latency":    "listInventory=400ms",
		"fault":      "updateInventory=status:503",
		"chaos-seed": "42",
	}
	fromFlagsOrEnv(t, settings, func(t *testing.T, addr string) {
		status, body, took := callDev(t, addr, "GET", "/v1/inventory", "", "")
		if status != 200 || took < 400*time.Millisecond {
			t.Errorf("list: %d after %s; want 200 after the 400 ms of the latency rule", status, took)
		}
		status, body, _ = callDev(t, addr, "PATCH", "/v1/inventory/3", "", `{"quantity": 1}`)
		if status != 503 || !strings.Contains(body, "fault injected by the mock's chaos rules: status 503") {
			t.Errorf("update: %d %s; want the 503 of the fault rule", status, body)
		}
		_, body, _ = callDev(t, addr, "GET", "/__admin/chaos", "", "")
		want := `{"seed":42,"rules":[{"operation":"listInventory","latency":"400ms"},{"operation":"updateInventory","fault":"status","status":503}]}`
		if strings.TrimSpace(body) != want {
			t.Errorf("GET /__admin/chaos = %s; want %s", body, want)
		}
	})
	// The variables take lists, comma-separated, as the flags repeated do.
	addr, _ := start(t, nil, env(map[string]string{
		"INVENTORY_MOCK_LATENCY": "listInventory=1ms,updateInventory=300ms",
		"INVENTORY_MOCK_FAULT":   "listInventory=status:500,updateInventory=slow@0",
	}), io.Discard)
	if status, _, _ := callDev(t, addr, "GET", "/v1/inventory", "", ""); status != 500 {
		t.Errorf("list under INVENTORY_MOCK_FAULT: %d; want 500", status)
	}
	if status, _, took := callDev(t, addr, "PATCH", "/v1/inventory/3", "", `{"quantity": 1}`); status != 200 || took < 300*time.Millisecond {
		t.Errorf("update under INVENTORY_MOCK_LATENCY: %d after %s; want 200 after 300 ms", status, took)
	}
}

// faultSequence runs a mock with args, sends it n lists, and returns what
// each got: its status and the journal's latency and fault.
func faultSequence(t *testing.T, args []string, n int) []string {
	t.Helper()
	addr, stop := start(t, args, env(nil), io.Discard)
	defer stop()
	for range n {
		callDev(t, addr, "GET", "/v1/inventory", "", "")
	}
	entries := journal(t, addr, fmt.Sprintf("?limit=%d", n))
	if len(entries) != n {
		t.Fatalf("journal holds %d entries; want %d", len(entries), n)
	}
	seq := make([]string, n)
	for i, e := range entries {
		seq[n-1-i] = fmt.Sprintf("%d %s", e.Status, e.Fault)
	}
	return seq
}

// TestChaosSeedReplays runs the mock twice with the same --chaos-seed: the
// same requests get the same latencies and faults. Another seed gives
// another sequence.
func TestChaosSeedReplays(t *testing.T) {
	args := func(seed string) []string {
		return []string{"--latency", "1ms-9ms", "--fault", "listInventory=status:503@0.5", "--chaos-seed", seed}
	}
	first := faultSequence(t, args("7"), 30)
	second := faultSequence(t, args("7"), 30)
	other := faultSequence(t, args("8"), 30)
	if strings.Join(first, "|") != strings.Join(second, "|") {
		t.Errorf("two runs with --chaos-seed 7 differ:\n%s\n%s", strings.Join(first, " | "), strings.Join(second, " | "))
	}
	if strings.Join(first, "|") == strings.Join(other, "|") {
		t.Errorf("--chaos-seed 7 and 8 gave the same sequence: %s", strings.Join(first, " | "))
	}
	joined := strings.Join(first, "|")
	if !strings.Contains(joined, "200 latency") || !strings.Contains(joined, "503 latency") {
		t.Errorf("sequence %s; want both 200s and 503s, each with its latency", joined)
	}
}

func TestSessionFlagsTakeEffect(t *testing.T) {
	t.Run("max-sessions", func(t *testing.T) {
		fromFlagsOrEnv(t, map[string]string{"max-sessions": "2"}, func(t *testing.T, addr string) {
			callDev(t, addr, "PATCH", "/v1/inventory/3", "a", `{"quantity": 1}`)
			callDev(t, addr, "PATCH", "/v1/inventory/3", "b", `{"quantity": 2}`)
			callDev(t, addr, "GET", "/v1/inventory", "a", "") // b is now the least recently used
			callDev(t, addr, "PATCH", "/v1/inventory/3", "c", `{"quantity": 3}`)
			if got := strings.Join(sessionNames(t, addr), ","); got != "default,a,c" {
				t.Errorf("sessions = %s; want default,a,c: past 2, the least recently used (b) goes", got)
			}
		})
	})
	t.Run("session-idle", func(t *testing.T) {
		fromFlagsOrEnv(t, map[string]string{"session-idle": "200ms"}, func(t *testing.T, addr string) {
			callDev(t, addr, "PATCH", "/v1/inventory/3", "idle", `{"quantity": 1}`)
			if got := strings.Join(sessionNames(t, addr), ","); got != "default,idle" {
				t.Fatalf("sessions = %s; want default,idle", got)
			}
			deadline := time.Now().Add(10 * time.Second)
			for strings.Join(sessionNames(t, addr), ",") != "default" {
				if time.Now().After(deadline) {
					t.Fatalf("after 10 s, sessions = %v; want the idle one dropped", sessionNames(t, addr))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if _, body, _ := callDev(t, addr, "GET", "/v1/inventory", "idle", ""); !strings.Contains(body, `{"petId":3,"quantity":25,`) {
				t.Errorf("a dropped session starts again from the fixtures; pet 3 = %.200s", body)
			}
		})
	})
}

func TestJournalFlagsTakeEffect(t *testing.T) {
	t.Run("journal-size", func(t *testing.T) {
		fromFlagsOrEnv(t, map[string]string{"journal-size": "2"}, func(t *testing.T, addr string) {
			for range 3 {
				callDev(t, addr, "GET", "/v1/inventory", "", "")
			}
			callDev(t, addr, "GET", "/v1/inventory", "s", "")
			if got := len(journal(t, addr, "?session=default")); got != 2 {
				t.Errorf("default session: %d entries; want the last 2", got)
			}
			if got := len(journal(t, addr, "")); got != 3 {
				t.Errorf("journal: %d entries; want 2 of the default session and 1 of s", got)
			}
		})
		addr, _ := start(t, []string{"--journal-size", "0"}, env(nil), io.Discard)
		callDev(t, addr, "GET", "/v1/inventory", "", "")
		if got := len(journal(t, addr, "")); got != 0 {
			t.Errorf("--journal-size 0: %d entries; want none", got)
		}
	})
	t.Run("journal-body-limit", func(t *testing.T) {
		fromFlagsOrEnv(t, map[string]string{"journal-body-limit": "10"}, func(t *testing.T, addr string) {
			callDev(t, addr, "PATCH", "/v1/inventory/3", "", `{"quantity": 12345}`)
			e := journal(t, addr, "")[0]
			if e.Request.Body != `{"quantity` || !e.Request.Truncated || e.Request.Bytes != 19 {
				t.Errorf("request body %q (cut %v, %d bytes); want the first 10 of 19 bytes", e.Request.Body, e.Request.Truncated, e.Request.Bytes)
			}
			if len(e.Response.Body) != 10 || !e.Response.Truncated {
				t.Errorf("response body %q (cut %v); want its first 10 bytes", e.Response.Body, e.Response.Truncated)
			}
		})
	})
}

// TestControlFlagMistakes checks that a control flag the mock cannot
// honour stops it with a message that says what to give instead.
func TestControlFlagMistakes(t *testing.T) {
	tests := []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"--journal-body-limit", "0"}, nil, "--journal-body-limit 0: want at least 1 byte; to keep no journal at all, give --journal-size 0"},
		{nil, map[string]string{"INVENTORY_MOCK_JOURNAL_BODY_LIMIT": "0"}, "--journal-body-limit 0: want at least 1 byte"},
		{[]string{"--journal-size", "-1"}, nil, "--journal-size must not be negative"},
		{[]string{"--chaos-seed", "soon"}, nil, "soon"},
		{[]string{"--session-idle", "0s"}, nil, "--session-idle must be positive"},
		{nil, map[string]string{"INVENTORY_MOCK_FAULT": "updateInventory=status"}, "needs a status from 400 to 599"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		// A mock that starts anyway is stopped, and the test fails.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, append([]string{"--addr", "127.0.0.1:0"}, tt.args...), env(tt.vars), io.Discard, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error()+stderr.String(), tt.want) || cli.Code(err) != cli.ExitCannotRun {
			t.Errorf("%v %v: error %v; want exit 2 with %q", tt.args, tt.vars, err, tt.want)
		}
	}
}
