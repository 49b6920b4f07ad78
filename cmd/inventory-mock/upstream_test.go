package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// upstreamKey is the backend's key in these tests: no message may show it.
const upstreamKey = "staging-key-9d2c41e07f"

// withKey is an environment with the backend's key.
var withKey = env(map[string]string{upstreamKeyEnv: upstreamKey})

// TestFixturesFrom starts the mock on the records of a live backend, the
// mock itself with 2,000 generated pets (a list it sends gzip-compressed),
// and checks it serves them and prints them for a snapshot.
func TestFixturesFrom(t *testing.T) {
	records := generated(t, 2000, 7)
	_, backend := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{upstreamKey}, Records: records}, nil)
	want := string(fixtures.Encode(records))

	var logs syncBuffer
	addr, _ := start(t, []string{"--fixtures-from", backend.URL + "/v1"}, withKey, &logs)
	if status, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key"); status != 200 || compact(t, body) != compact(t, want) {
		t.Errorf("the mock's list: %d, %d bytes; want the backend's %d bytes", status, len(body), len(want))
	}
	if got := logs.String(); !strings.Contains(got, "source=\"GET "+backend.URL+"/v1/inventory\"") || strings.Contains(got, upstreamKey) {
		t.Errorf("the start-up log does not name the source, or shows the key:\n%s", got)
	}

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--fixtures-from", backend.URL + "/v1", "--print-fixtures"}, withKey, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("--print-fixtures wrote %d bytes; want the backend's records, %d bytes, in the --fixtures format", out.Len(), len(want))
	}
}

// compact re-encodes a JSON document without spaces.
func compact(t *testing.T, doc string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return b.String()
}

// TestFixturesFromRefused: a backend that is down, refuses the key,
// answers what is not a list of records, or lies, stops start-up with
// exit status 2 and a message that says what the backend did, naming the
// record and the field where one does not fit, and never the key.
func TestFixturesFromRefused(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	serveJSON := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	for _, tt := range []struct {
		name    string
		backend http.HandlerFunc // nil: the closed server
		args    []string
		want    string
	}{
		{name: "down", want: "the backend cannot be reached"},
		{name: "key refused", backend: serveJSON(401, `{"code":"unauthorized","message":"key `+upstreamKey+` is not valid","status":401}`),
			want: `the backend refused the key (401: "key $INVENTORY_UPSTREAM_API_KEY is not valid"); check INVENTORY_UPSTREAM_API_KEY`},
		{name: "server error", backend: serveJSON(503, `{"code":"unavailable","message":"db down","status":503}`), want: `the backend answered 503: "db down"; want 200 with the list`},
		{name: "HTML", backend: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>login</html>")
		}, want: `Content-Type "text/html"; want application/json`},
		{name: "not a list", backend: serveJSON(200, `{"items":[]}`), want: "want a JSON array of InventoryItem"},
		{name: "not JSON", backend: serveJSON(200, `[{"petId":1,`), want: "want a JSON array of InventoryItem"},
		{name: "a record that does not fit", backend: serveJSON(200, `[{"petId":1,"quantity":1,"status":"sold"},{"petId":2,"quantity":1,"status":"lost"}]`),
			want: `the backend's list: record 1 (petId 2): status: "lost" is not one of`},
		{name: "a missing field", backend: serveJSON(200, `[{"petId":1,"status":"sold"}]`), want: "record 0 (petId 1): quantity: required"},
		{name: "duplicate keys", backend: serveJSON(200, `[{"petId":1,"quantity":1,"status":"sold"},{"petId":1,"quantity":2,"status":"sold"}]`), want: "duplicate of record 0"},
		{name: "the key in a record", backend: serveJSON(200, `[{"petId":1,"quantity":1,"status":"x-`+upstreamKey+`-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad-pad"}]`),
			want: "the list holds the key the mock sent; it is not served, nor quoted"},
		{name: "the key escaped in a record", backend: serveJSON(200, `[{"petId":1,"quantity":1,"status":"\u0073`+upstreamKey[1:]+`"}]`),
			want: "the list holds the key the mock sent"},
		{name: "cut short", backend: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `[{"petId":1,"quantity":1,`)
		}, want: "the backend's answer ended early"},
		{name: "bad gzip", backend: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "not gzip")
		}, want: "gzip answer cannot be read"},
		{name: "other encoding", backend: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, "[]")
		}, want: `Content-Encoding "br"; want none or gzip`},
		{name: "redirect", backend: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.example/v1/inventory", http.StatusFound)
		}, want: "it redirects to http://elsewhere.example/v1/inventory; give that address instead"},
		{name: "silent", backend: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, args: []string{"--upstream-timeout", "200ms"}, want: "the backend sent no answer within --upstream-timeout 200ms"},
		{name: "a byte at a time", backend: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[")
			for {
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond): // each well within --upstream-timeout
				}
				io.WriteString(w, " ")
			}
		}, args: []string{"--fixtures-timeout", "700ms", "--upstream-timeout", "300ms"}, want: "the list did not arrive whole within --fixtures-timeout 700ms ("},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := down.URL
			if tt.backend != nil {
				srv := httptest.NewServer(tt.backend)
				defer srv.Close()
				url = srv.URL
			}
			var out, errOut bytes.Buffer
			args := append([]string{"--addr", "127.0.0.1:0", "--fixtures-from", url + "/v1"}, tt.args...)
			err := run(context.Background(), args, withKey, &out, &errOut)
			if err == nil || cli.Code(err) != cli.ExitCannotRun || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run = %v (exit %d); want exit 2 with %q", err, cli.Code(err), tt.want)
			}
			if !strings.HasPrefix(err.Error(), "--fixtures-from: GET "+url+"/v1/inventory: ") {
				t.Errorf("the message does not name the request: %v", err)
			}
			if strings.Contains(err.Error(), "embedded fixtures") || strings.Contains(err.Error(), "--spec") {
				t.Errorf("the message gives the hint about --spec and the embedded fixtures, which does not apply: %v", err)
			}
			for _, s := range []string{err.Error(), out.String(), errOut.String()} {
				if strings.Contains(s, upstreamKey) || strings.Contains(s, upstreamKey[1:]) {
					t.Errorf("the key is shown: %s", s)
				}
			}
		})
	}
}

// TestFixturesFromLimit: a list longer than the limit is refused with the
// limit named, before it is all read, compressed or not.
func TestFixturesFromLimit(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, `{"petId":%d,"quantity":1,"status":"sold"},`, i+1)
	}
	list := `[` + b.String() + `{"petId":1,"quantity":1,"status":"sold"}]` // the last a duplicate
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if gz {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, list)
				zw.Close()
				return
			}
			io.WriteString(w, list)
		}))
		o, err := parse([]string{"--fixtures-from", srv.URL + "/v1"}, withKey)
		if err != nil {
			t.Fatal(err)
		}
		u, err := newUpstream(o)
		if err != nil {
			t.Fatal(err)
		}
		u.limit = 2 << 20
		c, _ := spec.Shared()
		sh, _ := fixtures.NewShape(c)
		if _, _, _, err := u.records(context.Background(), sh); err == nil || !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("gzip %v, within the limit: %v; want the duplicate found", gz, err)
		}
		u.limit = int64(len(list)) - 1
		if _, _, _, err := u.records(context.Background(), sh); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the list is longer than the %d bytes --fixtures-from reads", len(list)-1)) {
			t.Errorf("gzip %v, past the limit: %v; want the limit named", gz, err)
		}
		srv.Close()
	}
	if maxUpstreamList != 256<<20 {
		t.Errorf("maxUpstreamList = %d; mockserver/README.md and --help say 256 MiB", maxUpstreamList)
	}
}

// TestFixturesFromTLS: the backend's certificate is checked, against
// --upstream-ca-cert where given.
func TestFixturesFromTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+upstreamKey {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"petId":9,"quantity":1,"status":"sold"}]`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake, on purpose
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string // in the error; "": the records are served
	}{
		{"not trusted", nil, "certificate"},
		{"trusted with --upstream-ca-cert", []string{"--upstream-ca-cert", ca}, ""},
		{"--upstream-insecure-skip-verify", []string{"--upstream-insecure-skip-verify"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"--fixtures-from", srv.URL + "/v1", "--print-fixtures"}, tt.args...)
			err := run(context.Background(), args, withKey, &out, &errOut)
			switch {
			case tt.want == "" && (err != nil || !strings.Contains(out.String(), `"petId":9`)):
				t.Errorf("run = %v, %s; want the backend's record", err, out.String())
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("run = %v; want an error with %q", err, tt.want)
			}
		})
	}
}

// TestFixturesFromMemory measures the peak resident memory (VmHWM) of a
// mock started on a backend's list of 100,000 pets, against the same mock
// generating as many (--generate) in the same run: the list is read as a
// stream, so loading it costs about what generating does, where reading
// it whole cost about 17 times the list. INVENTORY_FIXTURES_FROM_PETS sets
// another number of pets, such as 1000000 for the README's figure.
func TestFixturesFromMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: peak memory cannot be read")
	}
	pets := 100_000
	if n, _ := strconv.Atoi(os.Getenv("INVENTORY_FIXTURES_FROM_PETS")); n > 0 {
		pets = n
	}
	list := fixtures.Encode(generated(t, pets, 3))
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(list)
	}))
	defer backend.Close()
	t.Setenv(upstreamKeyEnv, upstreamKey)
	peak := func(args ...string) int64 {
		c := startChild(t, args...)
		defer c.kill()
		n, err := cli.PeakRSS(strconv.Itoa(c.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	generate := peak("--generate", fmt.Sprint(pets))
	from := peak("--fixtures-from", backend.URL+"/v1")
	t.Logf("peak resident memory, %d pets (%.1f MB list): --generate %.1f MB, --fixtures-from %.1f MB (%.2fx)",
		pets, float64(len(list))/1e6, float64(generate)/1e6, float64(from)/1e6, float64(from)/float64(generate))
	if limit := generate*3/2 + int64(len(list)); from > limit {
		t.Errorf("--fixtures-from peaked at %.1f MB; want at most %.1f MB, 1.5 times --generate's %.1f MB and the list's size", float64(from)/1e6, float64(limit)/1e6, float64(generate)/1e6)
	}
}
