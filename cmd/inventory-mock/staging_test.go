package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/spec"
)

// TestStagingSettings: settings of the staging features that make no
// sense are refused with exit status 2, saying why.
func TestStagingSettings(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--watch"}, nil, "--watch reloads the file of --spec; give --spec FILE"},
		{[]string{"--watch", "--spec", "x.yaml", "--store", "redis://127.0.0.1:6379/0"}, nil, "--watch: replicas sharing a Redis store"},
		{[]string{"--fixtures-from", "http://127.0.0.1:1/v1"}, nil, "--fixtures-from needs the backend's key: set INVENTORY_UPSTREAM_API_KEY"},
		{[]string{"--fixtures-from", "http://127.0.0.1:1/v1", "--generate", "5"}, map[string]string{upstreamKeyEnv: "k"}, "--fixtures-from, --fixtures and --generate exclude each other"},
		{[]string{"--upstream-api-key", "k"}, nil, "--upstream-api-key is the key of --fixtures-from, which is not given"},
		{[]string{"--fixtures-from", "http://x/v1"}, map[string]string{upstreamKeyEnv: ""}, "--fixtures-from needs the backend's key"},
		{[]string{"--fixtures-from", "http://x/v1", "--upstream-api-key", " "}, nil, `--upstream-api-key " ": an empty key`},
		{[]string{"--upstream-ca-cert", "ca.pem"}, nil, "--upstream-ca-cert and --upstream-insecure-skip-verify need --proxy-to or --fixtures-from"},
		{[]string{"--proxy-to", "http://127.0.0.1:1/v1", "--rate-limit", "1/s"}, nil, "--proxy-to: --fixtures-from, --watch and --rate-limit are the mock's"},
		{[]string{"--rate-limit", "10/h"}, nil, `--rate-limit "10/h": rate "10/h": the unit is s or m`},
		{[]string{"--rate-limit", "10/s:0"}, nil, "burst"},
		{[]string{"--metrics=false", "--metrics-addr", "127.0.0.1:0"}, nil, "--metrics-addr serves the metrics, which --metrics=false turns off"},
		{nil, map[string]string{"INVENTORY_MOCK_METRICS": "maybe"}, "$INVENTORY_MOCK_METRICS=\"maybe\": want true or false"},
	} {
		_, err := parse(tt.args, env(tt.env))
		if err == nil || cli.Code(err) != cli.ExitCannotRun || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %v: %v; want exit 2 with %q", tt.args, tt.env, err, tt.want)
		}
	}
	err := run(t.Context(), []string{"--addr", "127.0.0.1:0", "--fixtures-from", "ftp://user:pw@x/v1"}, withKey, io.Discard, io.Discard)
	if err == nil || cli.Code(err) != cli.ExitCannotRun || !strings.Contains(err.Error(), `--fixtures-from "ftp://user:xxxxx@x/v1": want an http or https address`) {
		t.Errorf("--fixtures-from ftp://: %v; want exit 2, the password hidden", err)
	}
}

// TestRateLimitFlag: --rate-limit limits each key, and says so at start-up.
func TestRateLimitFlag(t *testing.T) {
	var logs syncBuffer
	addr, _ := start(t, []string{"--rate-limit", "1/m:2"}, env(nil), &logs)
	for i, want := range []int{200, 200, 429} {
		if got, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key"); got != want {
			t.Errorf("request %d: %d %s; want %d", i+1, got, body, want)
		}
	}
	if !strings.Contains(logs.String(), `limit="1/m per API key and session, burst 2"`) {
		t.Errorf("the start-up log does not say the limit:\n%s", logs.String())
	}
}

// TestMetricsFlags: /metrics behind the admin key, off with
// --metrics=false, and on --metrics-addr without a key; in proxy mode too.
func TestMetricsFlags(t *testing.T) {
	var logs syncBuffer
	addr, _ := start(t, []string{"--admin-key", "the-admin-key", "--metrics-addr", "127.0.0.1:0"}, env(nil), &logs)
	get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key")
	if got, body := get(t, http.DefaultClient, "http://"+addr+"/metrics", "the-admin-key"); got != 200 || !strings.Contains(body, `inventory_mock_requests_total{operation="listInventory",session="default",status="200"} 1`) {
		t.Errorf("GET /metrics: %d\n%s", got, body)
	}
	if got, _ := get(t, http.DefaultClient, "http://"+addr+"/metrics", "inventory-dev-key"); got != 401 {
		t.Errorf("GET /metrics with an API key: %d; want 401", got)
	}
	m := regexp.MustCompile(`serving metrics without a key" url=(http://\S+/metrics)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", logs.String())
	}
	if got, body := get(t, http.DefaultClient, m[1], ""); got != 200 || !strings.Contains(body, "inventory_mock_requests_total") {
		t.Errorf("GET %s without a key: %d", m[1], got)
	}
	if got, _ := get(t, http.DefaultClient, strings.TrimSuffix(m[1], "metrics")+"v1/inventory", "inventory-dev-key"); got != 404 {
		t.Errorf("the metrics listener serves the API: %d; want 404", got)
	}

	off, _ := start(t, []string{"--metrics=false"}, env(nil), io.Discard)
	if got, _ := get(t, http.DefaultClient, "http://"+off+"/metrics", "inventory-dev-key"); got != 404 {
		t.Errorf("--metrics=false: GET /metrics %d; want 404", got)
	}

	proxy, _ := start(t, []string{"--proxy-to", "http://" + addr + "/v1", "--admin-key", "proxy-admin"}, env(nil), io.Discard)
	get(t, http.DefaultClient, "http://"+proxy+"/v1/inventory", "inventory-dev-key")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, body := get(t, http.DefaultClient, "http://"+proxy+"/metrics", "proxy-admin")
		if strings.Contains(body, `inventory_mock_proxy_exchanges_total{operation="listInventory",status="200"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy's /metrics lacks the exchange:\n%s", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// health returns the contract /healthz says is in force.
func health(t *testing.T, addr string) (version, sha string) {
	t.Helper()
	_, body := get(t, http.DefaultClient, "http://"+addr+"/healthz", "")
	var h struct {
		Contract struct{ Version, SHA256 string }
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/healthz: %v: %s", err, body)
	}
	return h.Contract.Version, h.Contract.SHA256
}

// waitFor polls until cond holds, for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// saveAtomically writes a file as editors do: a temporary file renamed
// over it.
func saveAtomically(t *testing.T, file string, doc []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".swp")
	if err := os.WriteFile(tmp, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// TestWatch edits the spec of a running mock: an atomic save and an edit
// in place are loaded, writes survive them, and edits that do not load
// (bad YAML, a record that no longer fits) are logged once each while the
// contract in force keeps serving.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "openapi.yaml")
	orig := string(spec.Document)
	if err := os.WriteFile(file, spec.Document, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	addr, _ := start(t, []string{"--spec", file, "--watch"}, env(nil), &logs)
	base := "http://" + addr + "/v1/inventory"
	patchStatus(t, base+"/1", `{"quantity":77}`)
	_, sha0 := health(t, addr)

	edits := []struct {
		name  string
		doc   string
		save  func(t *testing.T, file string, doc []byte)
		check func(t *testing.T)
	}{
		{
			name: "atomic save: a new field and version",
			doc: strings.Replace(strings.Replace(orig, "  version: 1.0.0", "  version: 1.1.0", 1),
				"        status:\n          $ref: '#/components/schemas/PetStatus'\n",
				"        status:\n          $ref: '#/components/schemas/PetStatus'\n        note:\n          type: string\n", 1),
			save: saveAtomically,
			check: func(t *testing.T) {
				waitFor(t, "version 1.1.0 in force", func() bool { v, _ := health(t, addr); return v == "1.1.0" })
				if _, body := get(t, http.DefaultClient, base, "inventory-dev-key"); !strings.Contains(body, `{"petId":1,"quantity":77,"status":"pending"}`) {
					t.Errorf("the write did not survive the reload: %s", body)
				}
			},
		},
		{
			name: "in place: a bound on the update",
			doc:  strings.Replace(orig, "          description: The new stock count.\n", "          description: The new stock count.\n          maximum: 1000\n", 1),
			save: func(t *testing.T, file string, doc []byte) {
				if err := os.WriteFile(file, doc, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T) {
				waitFor(t, "version 1.0.0 again", func() bool { v, _ := health(t, addr); return v == "1.0.0" })
				if got := patchStatus(t, base+"/1", `{"quantity":1001}`); got != 400 {
					t.Errorf("quantity 1001 under a maximum of 1000: %d; want 400", got)
				}
			},
		},
	}
	for _, e := range edits {
		if !strings.Contains(e.doc, "note:") && !strings.Contains(e.doc, "maximum: 1000") {
			t.Fatalf("%s: the edit did not apply", e.name)
		}
		e.save(t, file, []byte(e.doc))
		e.check(t)
	}
	_, sha := health(t, addr)
	if sha == sha0 {
		t.Fatal("the sha256 in /healthz did not change")
	}

	// Edits that do not load: logged once each, the contract in force
	// kept.
	for _, bad := range []struct{ doc, reason string }{
		{"openapi: 3.0.3\ninfo: [\n", "spec: "},
		{strings.Replace(strings.Replace(orig, "      required: [petId, quantity, status]\n", "      required: [petId, quantity, status, shelf]\n", 1),
			"        status:\n          $ref: '#/components/schemas/PetStatus'\n",
			"        status:\n          $ref: '#/components/schemas/PetStatus'\n        shelf:\n          type: string\n", 1),
			"the record with petId 1 does not fit InventoryItem as the new contract serves it: shelf: required"},
	} {
		before := strings.Count(logs.String(), "spec edit not loaded")
		saveAtomically(t, file, []byte(bad.doc))
		waitFor(t, "the refusal logged", func() bool { return strings.Count(logs.String(), "spec edit not loaded") == before+1 })
		if !strings.Contains(logs.String(), bad.reason) {
			t.Errorf("the log does not say why (%q):\n%s", bad.reason, logs.String())
		}
		// More events in the directory, the same broken spec: not logged again.
		os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(time.Now().String()), 0o600)
		time.Sleep(500 * time.Millisecond)
		if n := strings.Count(logs.String(), "spec edit not loaded"); n != before+1 {
			t.Errorf("the same failure logged %d times; want once", n-before)
		}
		if _, now := health(t, addr); now != sha {
			t.Error("a refused edit is in force")
		}
		if got, _ := get(t, http.DefaultClient, base, "inventory-dev-key"); got != 200 {
			t.Errorf("after a refused edit, the list: %d", got)
		}
	}
	if strings.Count(logs.String(), "spec reloaded") != 2 {
		t.Errorf("want 2 reloads logged:\n%s", logs.String())
	}
}

// TestWatchRefs: a spec whose schemas are in a file next to it is served
// bundled, and an edit of that file is loaded.
func TestWatchRefs(t *testing.T) {
	dir := t.TempDir()
	doc := string(spec.Document)
	i, j, schemas := componentsBetween(t, doc, "InventoryItem", "InventoryUpdate")
	ext := strings.ReplaceAll(schemas, "#/components/schemas/PetStatus", "#/PetStatus")
	root := doc[:i] + "    InventoryItem:\n      $ref: './schemas.yaml#/InventoryItem'\n    PetStatus:\n      $ref: './schemas.yaml#/PetStatus'\n" + doc[j:]
	file := filepath.Join(dir, "openapi.yaml")
	if err := os.WriteFile(file, []byte(root), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schemas.yaml"), []byte(ext), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	addr, _ := start(t, []string{"--spec", file, "--watch"}, env(nil), &logs)
	base := "http://" + addr + "/v1/inventory"
	if got := patchStatus(t, base+"/1", `{"quantity":5}`); got != 200 {
		t.Fatalf("PATCH under the bundled spec: %d\n%s", got, logs.String())
	}
	if _, body := get(t, http.DefaultClient, "http://"+addr+"/openapi.yaml", ""); strings.Contains(body, "schemas.yaml") {
		t.Error("/openapi.yaml refers to a file the client does not have")
	}
	_, sha0 := health(t, addr)
	ext2 := strings.Replace(ext, "enum: [available, pending, sold]", "enum: [available, pending, sold, reserved]", 1)
	if ext2 == ext {
		t.Fatal("the enum edit did not apply")
	}
	saveAtomically(t, filepath.Join(dir, "schemas.yaml"), []byte(ext2))
	waitFor(t, "the edit of schemas.yaml in force", func() bool { _, sha := health(t, addr); return sha != sha0 })
	if _, body := get(t, http.DefaultClient, "http://"+addr+"/openapi.yaml", ""); !strings.Contains(body, "reserved") {
		t.Error("the reloaded spec lacks the new enum value")
	}
}

// componentsBetween finds the schemas of doc from component from up to
// component to, and returns where they start and end and their text as a
// file of its own would hold them (indented four spaces less).
func componentsBetween(t *testing.T, doc, from, to string) (int, int, string) {
	t.Helper()
	i := strings.Index(doc, "    "+from+":\n")
	j := strings.Index(doc, "    "+to+":\n")
	if i < 0 || j < i {
		t.Fatalf("the embedded spec has moved its schemas %s and %s", from, to)
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(doc[i:j], "\n") {
		b.WriteString(strings.TrimPrefix(l, "    "))
	}
	return i, j, b.String()
}

// patchStatus sends a PATCH with the development key and returns the status.
func patchStatus(t *testing.T, url, body string) int {
	t.Helper()
	req, _ := http.NewRequest("PATCH", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer inventory-dev-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSpecFileBounds: what --spec may pull in. A $ref to a file outside
// the spec's folder is refused (it would be served at /openapi.yaml),
// also through another file, unless --spec-refs-outside; a spec with its
// files past spec.MaxDocument is refused before it is parsed.
func TestSpecFileBounds(t *testing.T) {
	doc := string(spec.Document)
	i, j, petStatus := componentsBetween(t, doc, "PetStatus", "InventoryUpdate")
	refTo := func(file string) string {
		return doc[:i] + "    PetStatus:\n      $ref: '" + file + "#/PetStatus'\n" + doc[j:]
	}
	for _, tt := range []struct {
		name  string
		files map[string]string // relative to a temporary root; the spec is spec/openapi.yaml
		args  []string
		err   string // "": it serves
	}{
		{"a file beside the spec", map[string]string{"spec/openapi.yaml": refTo("./status.yaml"), "spec/status.yaml": petStatus}, nil, ""},
		{"a file below the spec", map[string]string{"spec/openapi.yaml": refTo("./parts/status.yaml"), "spec/parts/status.yaml": petStatus}, nil, ""},
		{"a file outside the spec's folder", map[string]string{"spec/openapi.yaml": refTo("../status.yaml"), "status.yaml": petStatus}, nil,
			"refers to ../status.yaml, outside the spec's folder"},
		{"outside, through another file", map[string]string{"spec/openapi.yaml": refTo("./hop.yaml"), "spec/hop.yaml": "PetStatus:\n  $ref: '../status.yaml#/PetStatus'\n", "status.yaml": petStatus}, nil,
			"hop.yaml refers to ../status.yaml, outside the spec's folder"},
		{"outside, allowed", map[string]string{"spec/openapi.yaml": refTo("../status.yaml"), "status.yaml": petStatus}, []string{"--spec-refs-outside"}, ""},
		{"a spec past the bound", map[string]string{"spec/openapi.yaml": doc + "\n#" + strings.Repeat("x", spec.MaxDocument)}, nil,
			"more than the 2 MiB the mock loads"},
		{"a referenced file past the bound", map[string]string{"spec/openapi.yaml": refTo("./status.yaml"), "spec/status.yaml": petStatus + "#" + strings.Repeat("x", spec.MaxDocument)}, nil,
			"more than the 2 MiB the mock loads"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tt.files {
				path := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"--addr", "127.0.0.1:0", "--spec", filepath.Join(root, "spec", "openapi.yaml")}, tt.args...)
			if tt.err != "" {
				var stderr bytes.Buffer
				err := run(context.Background(), args, env(nil), io.Discard, &stderr)
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("run = %v; want an error with %q", err, tt.err)
				}
				return
			}
			addr, _ := start(t, args[2:], env(nil), io.Discard)
			if _, body := get(t, http.DefaultClient, "http://"+addr+"/openapi.yaml", ""); !strings.Contains(body, "enum: [available, pending, sold]") && !strings.Contains(body, "- available") {
				t.Errorf("/openapi.yaml lacks the referenced enum:\n%.400s", body)
			}
		})
	}
}
