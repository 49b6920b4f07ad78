package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// processStatus returns the exit status of a child process that Run or
// Wait returned err for; a child that could not run fails the test.
func processStatus(t *testing.T, err error) int {
	t.Helper()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// env is an environment holding kv, and nothing else: a variable in kv
// with the value "" is set but empty, as os.LookupEnv tells.
func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// start runs the mock on a free loopback port and returns its address and
// a function that stops it and returns run's error.
func start(t *testing.T, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (addr string, stop func() error) {
	t.Helper()
	return startOut(t, args, lookupEnv, io.Discard, stderr)
}

// startOut is start with the mock's stdout.
func startOut(t *testing.T, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) (addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runReady(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), lookupEnv, nil, stdout, stderr, func(a string) { ready <- a })
	}()
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run stopped before serving: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the mock did not start")
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

func get(t *testing.T, client *http.Client, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServesWithKeysFromEnvironment(t *testing.T) {
	var logs syncBuffer
	addr, stop := start(t, nil, env(map[string]string{"INVENTORY_MOCK_API_KEYS": "k1, k2"}), &logs)
	base := "http://" + addr + "/v1/inventory"
	for _, tt := range []struct {
		key    string
		status int
	}{{"k1", 200}, {"k2", 200}, {"", 401}, {"inventory-dev-key", 401}} {
		if got, body := get(t, http.DefaultClient, base, tt.key); got != tt.status {
			t.Errorf("key %q: status = %d; want %d: %s", tt.key, got, tt.status, body)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run after shutdown = %v; want nil", err)
	}
	out := logs.String()
	for _, want := range []string{"msg=listening", "dashboard=http://", "records=64", "path=/v1/inventory", "status=401", "shutting down"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "k1") || strings.Contains(out, "k2") {
		t.Errorf("log holds an API key:\n%s", out)
	}
	if strings.Contains(out, "no API key configured") {
		t.Error("warned about the development key although keys were given")
	}
}

func TestDevKeyWarning(t *testing.T) {
	var logs syncBuffer
	addr, _ := start(t, nil, env(nil), &logs)
	if got, _ := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key"); got != 200 {
		t.Errorf("dev key: status = %d; want 200", got)
	}
	if !strings.Contains(logs.String(), "no API key configured") {
		t.Errorf("no warning about the development key:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "inventory-dev-key") {
		t.Error("the log prints the key itself")
	}
}

func TestGenerateAndHealthCheck(t *testing.T) {
	addr, stop := start(t, []string{"--generate", "1000", "--seed", "5", "--log-format", "json"}, env(nil), io.Discard)
	if got, body := get(t, http.DefaultClient, "http://"+addr+"/healthz", ""); got != 200 || !strings.Contains(body, `"items":1000`) {
		t.Errorf("/healthz = %d %s; want 200 with 1000 items", got, body)
	}
	if err := run(context.Background(), []string{"--health-check", "--addr", addr}, env(nil), io.Discard, io.Discard); err != nil {
		t.Errorf("--health-check against a running mock: %v", err)
	}
	stop()
	err := run(context.Background(), []string{"--health-check", "--addr", addr}, env(nil), io.Discard, io.Discard)
	if err == nil || cli.Code(err) != 1 {
		t.Errorf("--health-check against a stopped mock: error = %v, exit %d; want exit 1 (Docker reserves 2)", err, cli.Code(err))
	}
}

func TestSelfSignedTLS(t *testing.T) {
	certFile := filepath.Join(t.TempDir(), "mock.pem")
	var logs syncBuffer
	addr, _ := start(t, []string{"--tls-self-signed", "--tls-cert-out", certFile, "--api-key", "k"}, env(nil), &logs)
	if !strings.Contains(logs.String(), "file="+certFile) {
		t.Errorf("the log does not say where the certificate went:\n%s", logs.String())
	}
	// A client that trusts the written certificate verifies the mock.
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("--tls-cert-out wrote no PEM certificate: %q", pemBytes)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.TLS == nil || resp.TLS.PeerCertificates[0].DNSNames[0] != "localhost" {
		t.Errorf("no TLS certificate for localhost")
	}
	if got, _ := get(t, client, "https://"+addr+"/v1/inventory", "k"); got != 200 {
		t.Errorf("GET over TLS = %d; want 200", got)
	}
	if err := run(context.Background(), []string{"--health-check", "--tls-self-signed", "--addr", addr}, env(nil), io.Discard, io.Discard); err != nil {
		t.Errorf("--health-check over TLS: %v", err)
	}
}

// generated returns the records --generate n --seed seed serves.
func generated(t *testing.T, n int, seed uint64) []fixtures.Record {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	records, err := fixtures.Generate(sh, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

func TestPrintFixtures(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--print-fixtures", "--generate", "5", "--seed", "3"}, env(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if want := fixtures.Encode(generated(t, 5, 3)); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("--print-fixtures = %s; want %s", out.Bytes(), want)
	}
	out.Reset()
	// The environment works like the flags.
	if err := run(context.Background(), []string{"--print-fixtures"}, env(map[string]string{"INVENTORY_MOCK_GENERATE": "5", "INVENTORY_MOCK_SEED": "3"}), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if want := fixtures.Encode(generated(t, 5, 3)); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("--print-fixtures from the environment = %s; want %s", out.Bytes(), want)
	}
}

func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"petId":1,"quantity":1,"status":"sold"},{"petId":2,"quantity":"many","status":"sold"}]`), 0o600)
	badSpec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(badSpec, []byte("openapi: 3.0.3\npaths: {}\n"), 0o600)
	// The record requires a field it does not define: valid JSON Schema.
	undefined := filepath.Join(dir, "undefined.yaml")
	if doc, err := os.ReadFile("../../spec/openapi.yaml"); err != nil || !bytes.Contains(doc, []byte("required: [petId, quantity, status]\n")) {
		t.Fatalf("spec/openapi.yaml: %v; want InventoryItem's required: [petId, quantity, status]", err)
	} else {
		os.WriteFile(undefined, bytes.Replace(doc, []byte("required: [petId, quantity, status]\n"), []byte("required: [petId, quantity, status, updatedAt]\n"), 1), 0o600)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"bad fixture", []string{"--fixtures", bad}, nil, []string{"bad.json", "record 1", "petId 2", "quantity"}},
		{"missing fixture", []string{"--fixtures", filepath.Join(dir, "none.json")}, nil, []string{"none.json"}},
		{"bad spec", []string{"--spec", badSpec}, nil, []string{"not a valid OpenAPI document"}},
		{"required field not defined", []string{"--spec", undefined}, nil, []string{"InventoryItem lists updatedAt in required but defines no updatedAt property", "define updatedAt under InventoryItem's properties", "or drop it from required"}},
		{"unknown flag", []string{"--nope"}, nil, []string{"flag provided but not defined: --nope (see --help)"}},
		{"unknown flag typed with one dash", []string{"-nope"}, nil, []string{"flag provided but not defined: --nope (see --help)"}},
		{"flag without its value", []string{"--addr"}, nil, []string{"flag needs an argument: --addr"}},
		{"empty key", []string{"--api-key", ""}, nil, []string{`--api-key "": an empty API key; give a key, or leave the setting out`}},
		{"empty keys from the environment", nil, map[string]string{"INVENTORY_MOCK_API_KEYS": " , "}, []string{`$INVENTORY_MOCK_API_KEYS=" , ": an empty API key`}},
		// A variable set to "" is an unset secret passed on (GitHub's env:
		// from a missing secret, compose's ${VAR:-}): never the dev key.
		{"keys variable set but empty", nil, map[string]string{"INVENTORY_MOCK_API_KEYS": ""}, []string{"$INVENTORY_MOCK_API_KEYS is set but empty: an empty API key"}},
		{"admin key variable set but empty", nil, map[string]string{"INVENTORY_MOCK_ADMIN_KEY": ""}, []string{"$INVENTORY_MOCK_ADMIN_KEY is set but empty: an empty admin key"}},
		{"admin key variable of spaces", nil, map[string]string{"INVENTORY_MOCK_ADMIN_KEY": "  "}, []string{`$INVENTORY_MOCK_ADMIN_KEY="  ": an empty admin key`}},
		{"empty admin key", []string{"--admin-key", ""}, nil, []string{`--admin-key "": an empty admin key; give a key, or leave the setting out`}},
		{"empty admin key in the proxy", []string{"--proxy-to", "http://127.0.0.1:1/v1", "--admin-key="}, nil, []string{`--admin-key "": an empty admin key`}},
		{"empty origin", []string{"--cors-origin", ""}, nil, []string{`--cors-origin "": an empty origin`}},
		{"whole number", []string{"--generate", "lots"}, nil, []string{`--generate "lots": want a whole number`}},
		{"whole number from the environment", nil, map[string]string{"INVENTORY_MOCK_GENERATE": "abc"}, []string{`$INVENTORY_MOCK_GENERATE="abc": want a whole number`}},
		{"negative seed", []string{"--seed", "-1"}, nil, []string{`--seed "-1": want a whole number, 0 or more`}},
		{"number out of range", []string{"--journal-size", "99999999999999999999"}, nil, []string{`--journal-size "99999999999999999999": want a whole number; this one is out of range`}},
		{"duration without a unit", []string{"--max-delay", "5"}, nil, []string{`--max-delay "5": want a duration such as 500ms`}},
		{"duration from the environment", nil, map[string]string{"INVENTORY_MOCK_SESSION_IDLE": "soon"}, []string{`$INVENTORY_MOCK_SESSION_IDLE="soon": want a duration such as 500ms`}},
		{"boolean", []string{"--tls-self-signed=yes"}, nil, []string{`--tls-self-signed "yes": want true or false (also 1 or 0)`}},
		{"origin without a scheme", []string{"--cors-origin", "localhost:3000"}, nil, []string{`"localhost:3000" is not an origin; want scheme://host[:port]`}},
		{"origin with a path", []string{"--cors-origin", "http://app.test/app"}, nil, []string{"without a path"}},
		{"no pets", []string{"--generate", "0"}, nil, []string{"--generate 0: want at least 1 pet"}},
		{"seed alone", []string{"--seed", "5"}, nil, []string{"--seed seeds --generate, which is not given"}},
		{"boolean from the environment", nil, map[string]string{"INVENTORY_MOCK_TLS_SELF_SIGNED": "yes"}, []string{`$INVENTORY_MOCK_TLS_SELF_SIGNED="yes": want true or false`}},
		{"certificate out without self-signed", []string{"--tls-cert-out", "x.pem"}, nil, []string{"--tls-cert-out writes the certificate of --tls-self-signed"}},
		{"stray argument", []string{"serve"}, nil, []string{`unexpected argument "serve"`}},
		{"half TLS", []string{"--tls-cert", "c.pem"}, nil, []string{"--tls-cert and --tls-key go together"}},
		{"generate and fixtures", []string{"--generate", "3", "--fixtures", bad}, nil, []string{"exclude each other"}},
		{"bad log format", []string{"--log-format", "xml"}, nil, []string{"text or json"}},
		{"port taken", []string{"--addr", "256.0.0.1:1"}, nil, []string{"256.0.0.1"}},
		{"unknown fault", []string{"--fault", "meltdown"}, nil, []string{`fault "meltdown": want one of status, reset, empty, truncate, slow`}},
		{"fault probability", []string{"--fault", "reset@2"}, nil, []string{"probability 2: want a number from 0 to 1"}},
		{"status fault without status", []string{"--fault", "status"}, nil, []string{"needs a status from 400 to 599"}},
		{"fault on no operation", []string{"--fault", "deletePet=reset"}, nil, []string{`no operation "deletePet"`}},
		{"latency past the cap", []string{"--latency", "1m"}, nil, []string{"longer than the mock's cap of 30s"}},
		{"latency from the environment", nil, map[string]string{"INVENTORY_MOCK_LATENCY": "soon"}, []string{`latency "soon"`}},
		{"spec variant without its field", []string{"--spec", "../../testdata/specs/required-updated-at.yaml"}, nil, []string{"fixtures/inventory.json", "record 0", "updatedAt: required", "--generate N", "--fixtures FILE"}},
		{"address without a port", []string{"--addr", "127.0.0.1"}, nil, []string{`--addr "127.0.0.1": want host:port`}},
		{"address with a port that is no number", []string{"--addr=127.0.0.1:http"}, nil, []string{`--addr "127.0.0.1:http": the port "http" is not a number`}},
		{"latency that is no duration", []string{"--latency", "fast"}, nil, []string{`--latency "fast": want a duration such as 200ms, or a range such as 50ms-1s (see --help)`}},
		{"latency of an operation that is no duration", []string{"--latency", "updateInventory=fast"}, nil, []string{`--latency "updateInventory=fast": want a duration such as 200ms`}},
		{"fault on no operation, named", []string{"--latency", "1ms", "--fault", "deletePet=reset"}, nil, []string{`--fault "deletePet=reset": no operation "deletePet"`}},
		{"spec that is not there", []string{"--spec", "/nonexistent.yaml"}, nil, []string{"--spec: open /nonexistent.yaml"}},
		{"admin origin *", []string{"--admin-origin", "*"}, nil, []string{`--admin-origin "*": the admin API is never open to every origin`}},
		{"allowed host with a port", []string{"--allowed-host", "mock:8080"}, nil, []string{`--allowed-host "mock:8080"`, "without a port"}},
		{"allowed host with a scheme", nil, map[string]string{"INVENTORY_MOCK_ALLOWED_HOSTS": "mock,http://mock"}, []string{`$INVENTORY_MOCK_ALLOWED_HOSTS="mock,http://mock"`, "not a host name"}},
		{"no connections", []string{"--max-connections", "0"}, nil, []string{"--max-connections 0: want at least 1"}},
		{"proxy to a backend without its base path", []string{"--proxy-to", "http://127.0.0.1:9"}, nil, []string{"--proxy-to http://127.0.0.1:9: the URL has no path", "base path /v1", "http://127.0.0.1:9/v1"}},
		{"proxy to a backend at /", []string{"--proxy-to", "http://u:pw@127.0.0.1:9/"}, nil, []string{"base path /v1", "http://u:xxxxx@127.0.0.1:9/v1"}},
		{"a rule pattern that matches no rule", []string{"--proxy-to", "http://127.0.0.1:9/v1", "--ignore-rule", "nope-*"}, nil, []string{`--ignore-rule: rule pattern "nope-*" matches no rule; the rules are: request-operation-unknown`}},
		{"admin origin in the proxy", []string{"--proxy-to", "http://127.0.0.1:9/v1", "--admin-origin", "http://localhost:3000"}, nil, []string{"--admin-origin does not apply"}},
		{"no sessions", []string{"--max-sessions", "0"}, nil, []string{"--max-sessions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := runRefused(t, tt.args, env(tt.env), &stderr)
			if err == nil {
				t.Fatal("run() = nil; want an error")
			}
			msg := err.Error() + stderr.String()
			// The refusal is the last thing said: no warning of a
			// start-up that is not going to happen comes before it.
			if strings.Contains(stderr.String(), "development key") {
				t.Errorf("the development-key warning was printed before the refusal:\n%s", &stderr)
			}
			// The flag and its value are quoted once.
			if n := strings.Count(msg, fmt.Sprintf("%q", "fast")); n > 1 {
				t.Errorf("error %q quotes the value %d times; want once", msg, n)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if cli.Code(err) != 2 {
				t.Errorf("exit code = %d; want 2", cli.Code(err))
			}
			// Flags are named as --help and the README name them.
			if m := goFlagName.FindString(err.Error()); m != "" {
				t.Errorf("error %q names a flag Go's way, %q; want --name", err, m)
			}
		})
	}
}

// runRefused runs the mock with args on a free loopback port (args may
// name another --addr), for settings it must refuse: should it start
// instead, it is stopped at once, and run's nil error fails the test
// rather than hanging it.
func runRefused(t *testing.T, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return runReady(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), lookupEnv, nil, io.Discard, stderr, func(string) {
		t.Error("the mock started; want these settings refused")
		cancel()
	})
}

// goFlagName finds a flag written with one dash, as package flag writes it.
var goFlagName = regexp.MustCompile(`(^|[^-\w])-[a-z][a-z-]+`)

// TestHealthCheckExitsOne: a container's health check exits 0 or 1, never
// 2 (Docker reserves it), whatever went wrong, a bad setting included; the
// same settings without --health-check stop start-up with 2.
func TestHealthCheckExitsOne(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"nothing listening", []string{"--health-check", "--addr", "127.0.0.1:1"}, nil, 1},
		{"an address without a port", []string{"--health-check", "--addr", "nonsense"}, nil, 1},
		{"a bad variable", []string{"--health-check"}, map[string]string{"INVENTORY_MOCK_GENERATE": "abc"}, 1},
		{"an empty key variable", []string{"--health-check"}, map[string]string{"INVENTORY_MOCK_API_KEYS": ""}, 1},
		{"an unknown flag", []string{"--nope", "--health-check"}, nil, 1},
		{"the same settings, without the check", []string{"--addr", "nonsense"}, nil, 2},
		{"a bad variable, without the check", nil, map[string]string{"INVENTORY_MOCK_GENERATE": "abc"}, 2},
		{"the check turned off", []string{"--health-check=false", "--nope"}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runRefused(t, tt.args, env(tt.env), io.Discard)
			if got := cli.Code(err); got != tt.want {
				t.Errorf("exit status = %d (%v); want %d", got, err, tt.want)
			}
		})
	}
}

// TestEmptyVariablesAreUnset: a variable set to "" is read as not set,
// except a key's (above), so compose's ${VAR:-} keeps the defaults.
func TestEmptyVariablesAreUnset(t *testing.T) {
	empty := map[string]string{}
	for _, name := range []string{"INVENTORY_MOCK_ADDR", "INVENTORY_MOCK_FIXTURES", "INVENTORY_MOCK_CORS_ORIGINS", "INVENTORY_MOCK_GENERATE", "INVENTORY_MOCK_SEED", "INVENTORY_MOCK_MAX_DELAY", "INVENTORY_MOCK_TLS_SELF_SIGNED", "INVENTORY_MOCK_LOG_FORMAT"} {
		empty[name] = ""
	}
	o, err := parse(nil, env(empty))
	if err != nil {
		t.Fatalf("parse with empty variables: %v", err)
	}
	if o.Addr != "127.0.0.1:8080" || len(o.CORSOrigins) != 0 || o.Generate != 0 || o.MaxDelay != 30*time.Second || o.LogFormat != "text" {
		t.Errorf("empty variables changed the defaults: %+v", o)
	}
}

func TestHelpAndVersion(t *testing.T) {
	var stderr, stdout bytes.Buffer
	err := run(context.Background(), []string{"--help"}, env(nil), &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) || cli.Code(err) != 0 {
		t.Errorf("--help: err = %v, exit %d; want flag.ErrHelp, exit 0", err, cli.Code(err))
	}
	help := stdout.String()
	for _, want := range []string{"--addr HOST:PORT", "INVENTORY_MOCK_ADDR", "INVENTORY_MOCK_API_KEYS", "--generate N", "--tls-self-signed", "/__admin/", "Prefer: code=404", "X-Mock-Session", "Exit status"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if stderr.Len() > 0 {
		t.Errorf("--help wrote to stderr: %s", stderr.String())
	}
	// Actions take no environment variable.
	for _, action := range []string{"INVENTORY_MOCK_VERSION", "INVENTORY_MOCK_PRINT_FIXTURES", "INVENTORY_MOCK_HEALTH_CHECK"} {
		if strings.Contains(help, action) {
			t.Errorf("--help offers %s: an action must not come from the environment", action)
		}
	}
	o, err := parse(nil, env(map[string]string{"INVENTORY_MOCK_VERSION": "1", "INVENTORY_MOCK_PRINT_FIXTURES": "true"}))
	if err != nil || o.Version || o.PrintFixtures {
		t.Errorf("actions from the environment: %+v, %v; want none taken", o, err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"--version"}, env(nil), &stdout, io.Discard); err != nil || !strings.HasPrefix(stdout.String(), "inventory-mock ") || strings.Contains(stdout.String(), "(devel)") {
		t.Errorf("--version = %q, %v", stdout.String(), err)
	}
}

func TestKeysWithCommas(t *testing.T) {
	o, err := parse([]string{"--api-key", "S3cr3t,x"}, env(nil))
	if err != nil || len(o.APIKeys) != 1 || o.APIKeys[0] != "S3cr3t,x" {
		t.Errorf("--api-key S3cr3t,x = %q, %v; want one key, comma and all", o.APIKeys, err)
	}
	o, err = parse(nil, env(map[string]string{"INVENTORY_MOCK_API_KEYS": "k1, k2"}))
	if err != nil || strings.Join(o.APIKeys, "|") != "k1|k2" {
		t.Errorf("$INVENTORY_MOCK_API_KEYS=k1, k2 = %q, %v; want two keys", o.APIKeys, err)
	}
}

// TestCORSOriginsAreNormalised: each --cors-origin becomes the Origin
// header a browser sends for it (RFC 6454: lower case, no path, no
// default port), so that it matches.
func TestCORSOriginsAreNormalised(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://localhost:3000/", "http://localhost:3000"},
		{"HTTPS://App.Example.com:8443", "https://app.example.com:8443"},
		{"http://localhost:80", "http://localhost"},
		{"https://app.test:443", "https://app.test"},
		{"HTTP://LOCALHOST:80/", "http://localhost"},
		{"https://app.test:80", "https://app.test:80"},
		{"http://app.test:443", "http://app.test:443"},
		{"http://[::1]:80", "http://[::1]"},
		{" http://app.test ", "http://app.test"},
		{"*", "*"},
	}
	for _, tt := range tests {
		o, err := parse([]string{"--cors-origin", tt.in}, env(nil))
		if err != nil {
			t.Errorf("--cors-origin %q: %v", tt.in, err)
			continue
		}
		if got := strings.Join(o.CORSOrigins, " "); got != tt.want {
			t.Errorf("--cors-origin %q = %q; want %q", tt.in, got, tt.want)
		}
	}
	o, err := parse(nil, env(map[string]string{"INVENTORY_MOCK_CORS_ORIGINS": "http://localhost:80, https://app.test:443"}))
	if err != nil || strings.Join(o.CORSOrigins, " ") != "http://localhost https://app.test" {
		t.Errorf("$INVENTORY_MOCK_CORS_ORIGINS = %q, %v; want the default ports dropped", o.CORSOrigins, err)
	}
	for _, bad := range []string{"", " ", "localhost:3000", "null", "ftp://x", "http://app.test/app", "http://app.test?x", "http://u@app.test", "http://"} {
		if _, err := parse([]string{"--cors-origin", bad}, env(nil)); err == nil || cli.Code(err) != 2 {
			t.Errorf("--cors-origin %q: error %v; want a refusal, exit 2", bad, err)
		}
	}
}

// TestCORSOriginWithDefaultPortMatches sends a browser's preflight to a mock
// started with --cors-origin http://localhost:80: the browser sends
// Origin: http://localhost, and gets its origin allowed.
func TestCORSOriginWithDefaultPortMatches(t *testing.T) {
	addr, _ := start(t, []string{"--cors-origin", "http://localhost:80", "--cors-origin", "https://app.test:443"}, env(nil), io.Discard)
	for _, origin := range []string{"http://localhost", "https://app.test"} {
		req, _ := http.NewRequest("OPTIONS", "http://"+addr+"/v1/inventory", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin = %q; want %q", origin, got, origin)
		}
	}
}

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		name      string
		env       map[string]string
		pets      int
		bytes     int
		wantGC    int
		wantLimit int64
	}{
		{"small data set", nil, 64, 3_000, 400, math.MaxInt64},
		{"GOGC set by the user", map[string]string{"GOGC": "50"}, 64, 3_000, 100, math.MaxInt64},
		{"a million pets: the floor", nil, 1_000_000, 55_000_000, 100, minMemoryLimit},
		{"a million large pets: three times the data", nil, 1_000_000, 100_000_000, 100, 300_000_000},
		{"a million pets, GOMEMLIMIT set by the user", map[string]string{"GOMEMLIMIT": "1GiB"}, 1_000_000, 55_000_000, 100, math.MaxInt64},
	}
	for _, tt := range tests {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		tuneGC(env(tt.env), tt.pets, tt.bytes)
		if got := debug.SetGCPercent(100); got != tt.wantGC {
			t.Errorf("%s: GC percent = %d; want %d", tt.name, got, tt.wantGC)
		}
		if got := debug.SetMemoryLimit(math.MaxInt64); got != tt.wantLimit {
			t.Errorf("%s: memory limit = %d; want %d", tt.name, got, tt.wantLimit)
		}
	}
}

// TestReadmeFlagTable keeps the table of flags in this command's README.md
// the same as --help, row for row: both come from the same FlagSet. On a
// difference it names the rows missing and the rows extra, and prints the
// table to paste.
func TestReadmeFlagTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(newParser(&options{}).MarkdownTable(), "\n"), "\n")
	got := tableUnder(string(readme), "## Flags and environment")
	if slices.Equal(got, want) {
		return
	}
	for _, row := range want {
		if !slices.Contains(got, row) {
			t.Errorf("cmd/inventory-mock/README.md lacks the row %s", row)
		}
	}
	for _, row := range got {
		if !slices.Contains(want, row) {
			t.Errorf("cmd/inventory-mock/README.md has a row --help does not: %s", row)
		}
	}
	t.Errorf("cmd/inventory-mock/README.md's flag table is not the one --help gives; paste this under \"Flags and environment\":\n\n%s", strings.Join(want, "\n"))
}

// tableUnder returns the rows of the first Markdown table after heading.
func tableUnder(doc, heading string) []string {
	_, after, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	var rows []string
	for _, line := range strings.Split(after, "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
			rows = append(rows, line)
		case len(rows) > 0, strings.HasPrefix(line, "#"):
			return rows
		}
	}
	return rows
}

func TestPprof(t *testing.T) {
	if _, err := servePprof("0.0.0.0:0", nil, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "loopback address only") {
		t.Errorf("--pprof on every interface: error = %v; want a refusal", err)
	}
	var logs syncBuffer
	start(t, []string{"--pprof", "127.0.0.1:0"}, env(nil), &logs)
	i := strings.Index(logs.String(), "url=http://127.0.0.1:")
	if i < 0 {
		t.Fatalf("no profile URL in the log:\n%s", logs.String())
	}
	url := strings.Fields(logs.String()[i+4:])[0]
	if got, _ := get(t, http.DefaultClient, url, ""); got != 200 {
		t.Errorf("GET %s = %d; want 200", url, got)
	}
}

func TestWriteTimeoutCoversMaxDelay(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 30 * time.Second, 2 * time.Minute, time.Hour} {
		if got := writeTimeout(d); got <= d {
			t.Errorf("--max-delay %s: write timeout %s cuts the longest delay", d, got)
		}
	}
	if _, err := parse([]string{"--session-idle", "1ns"}, env(nil)); err != nil {
		t.Errorf("--session-idle 1ns: %v", err)
	}
}

// TestBinary runs the command as a user does, built as the Dockerfile
// builds it, for what only main and the build decide: the real
// environment (a variable set to "" is not one left out), what goes to
// which stream, the exit status, and the stamped version.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := buildAsDockerfile(t, "v9.9.9-test")
	tests := []struct {
		name           string
		args           []string
		env            []string
		status         int
		stdout, stderr string // part of each; stderr "" for none at all
	}{
		{"help", []string{"--help"}, nil, 0, "Usage: inventory-mock [flags]", ""},
		{"version", []string{"--version"}, nil, 0, "inventory-mock v9.9.9-test\n", ""},
		{"bad flag", []string{"--nope"}, nil, 2, "", "inventory-mock: flag provided but not defined: --nope (see --help)\n"},
		{"keys variable set but empty", nil, []string{"INVENTORY_MOCK_API_KEYS="}, 2, "", "inventory-mock: $INVENTORY_MOCK_API_KEYS is set but empty: an empty API key"},
		{"admin key variable set but empty", nil, []string{"INVENTORY_MOCK_ADMIN_KEY="}, 2, "", "$INVENTORY_MOCK_ADMIN_KEY is set but empty"},
		{"health check of a bad address", []string{"--health-check", "--addr", "nonsense"}, nil, 1, "", "health check: --addr \"nonsense\""},
		{"health check with a bad variable", []string{"--health-check"}, []string{"INVENTORY_MOCK_MAX_DELAY=5"}, 1, "", `$INVENTORY_MOCK_MAX_DELAY="5": want a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"--addr", "127.0.0.1:0"}, tt.args...)...)
			cmd.Env = append(os.Environ(), tt.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still running after 10 s: it started instead of refusing\n%s", &stderr)
			}
			status := processStatus(t, err)
			if status != tt.status {
				t.Errorf("exit status = %d; want %d\nstderr: %s", status, tt.status, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, &stdout)
			}
			switch {
			case tt.stderr == "" && stderr.Len() > 0:
				t.Errorf("stderr = %q; want nothing", &stderr)
			case !strings.Contains(stderr.String(), tt.stderr):
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, &stderr)
			case tt.stderr != "" && strings.Count(stderr.String(), "\n") != 1:
				t.Errorf("stderr holds %d lines; want one:\n%s", strings.Count(stderr.String(), "\n"), &stderr)
			}
		})
	}
}

// envName returns the environment variable of a flag; "" for none.
func envName(flag string) string { return newParser(&options{}).Env(flag) }
