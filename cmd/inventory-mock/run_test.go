package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

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

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// start runs the mock on a free loopback port and returns its address and
// a function that stops it and returns run's error.
func start(t *testing.T, args []string, getenv func(string) string, stderr io.Writer) (addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), getenv, io.Discard, stderr, func(a string) { ready <- a })
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
	for _, want := range []string{"msg=listening", "records=64", "path=/v1/inventory", "status=401", "shutting down"} {
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
	if err := run(context.Background(), []string{"--health-check", "--addr", addr}, env(nil), io.Discard, io.Discard, nil); err != nil {
		t.Errorf("--health-check against a running mock: %v", err)
	}
	stop()
	if err := run(context.Background(), []string{"--health-check", "--addr", addr}, env(nil), io.Discard, io.Discard, nil); err == nil {
		t.Error("--health-check against a stopped mock: error = nil")
	}
}

func TestSelfSignedTLS(t *testing.T) {
	addr, _ := start(t, []string{"--tls-self-signed", "--api-key", "k"}, env(nil), io.Discard)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
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
	if err := run(context.Background(), []string{"--health-check", "--tls-self-signed", "--addr", addr}, env(nil), io.Discard, io.Discard, nil); err != nil {
		t.Errorf("--health-check over TLS: %v", err)
	}
}

// generated returns the records --generate n --seed seed serves, encoded.
func generated(t *testing.T, n int, seed uint64) []byte {
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
	return fixtures.Encode(records)
}

func TestPrintFixtures(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--print-fixtures", "--generate", "5", "--seed", "3"}, env(nil), &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if want := generated(t, 5, 3); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("--print-fixtures = %s; want %s", out.Bytes(), want)
	}
	out.Reset()
	// The environment works like the flags.
	if err := run(context.Background(), []string{"--print-fixtures"}, env(map[string]string{"INVENTORY_MOCK_GENERATE": "5", "INVENTORY_MOCK_SEED": "3"}), &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if want := generated(t, 5, 3); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("--print-fixtures from the environment = %s; want %s", out.Bytes(), want)
	}
}

func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"petId":1,"quantity":1,"status":"sold"},{"petId":2,"quantity":"many","status":"sold"}]`), 0o600)
	badSpec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(badSpec, []byte("openapi: 3.0.3\npaths: {}\n"), 0o600)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"bad fixture", []string{"--fixtures", bad}, nil, []string{"bad.json", "record 1", "petId 2", "quantity"}},
		{"missing fixture", []string{"--fixtures", filepath.Join(dir, "none.json")}, nil, []string{"none.json"}},
		{"bad spec", []string{"--spec", badSpec}, nil, []string{"not a valid OpenAPI document"}},
		{"unknown flag", []string{"--nope"}, nil, []string{"flag provided but not defined"}},
		{"stray argument", []string{"serve"}, nil, []string{`unexpected argument "serve"`}},
		{"half TLS", []string{"--tls-cert", "c.pem"}, nil, []string{"--tls-cert and --tls-key go together"}},
		{"generate and fixtures", []string{"--generate", "3", "--fixtures", bad}, nil, []string{"exclude each other"}},
		{"bad log format", []string{"--log-format", "xml"}, nil, []string{"text or json"}},
		{"bad env value", nil, map[string]string{"INVENTORY_MOCK_GENERATE": "lots"}, []string{"$INVENTORY_MOCK_GENERATE"}},
		{"port taken", []string{"--addr", "256.0.0.1:1"}, nil, []string{"256.0.0.1"}},
		{"unknown fault", []string{"--fault", "meltdown"}, nil, []string{`fault "meltdown": want one of status, reset, empty, truncate, slow`}},
		{"fault probability", []string{"--fault", "reset@2"}, nil, []string{"probability 2: want a number from 0 to 1"}},
		{"status fault without status", []string{"--fault", "status"}, nil, []string{"needs a status from 400 to 599"}},
		{"fault on no operation", []string{"--fault", "deletePet=reset"}, nil, []string{`no operation "deletePet"`}},
		{"latency past the cap", []string{"--latency", "1m"}, nil, []string{"longer than the mock's cap of 30s"}},
		{"latency from the environment", nil, map[string]string{"INVENTORY_MOCK_LATENCY": "soon"}, []string{`latency "soon"`}},
		{"spec variant without its field", []string{"--spec", "../../testdata/specs/required-updated-at.yaml"}, nil, []string{"fixtures/inventory.json", "record 0", "updatedAt: required"}},
		{"no sessions", []string{"--max-sessions", "0"}, nil, []string{"--max-sessions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tt.args, env(tt.env), io.Discard, &stderr, nil)
			if err == nil {
				t.Fatal("run() = nil; want an error")
			}
			msg := err.Error() + stderr.String()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if exitCode(err) != 2 {
				t.Errorf("exit code = %d; want 2", exitCode(err))
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	var stderr, stdout bytes.Buffer
	err := run(context.Background(), []string{"--help"}, env(nil), &stdout, &stderr, nil)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Errorf("--help: err = %v, exit %d; want flag.ErrHelp, exit 0", err, exitCode(err))
	}
	for _, want := range []string{"--addr", "INVENTORY_MOCK_ADDR", "INVENTORY_MOCK_API_KEYS", "--generate", "--tls-self-signed", "/__admin/reset"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if err := run(context.Background(), []string{"--version"}, env(nil), &stdout, io.Discard, nil); err != nil || !strings.HasPrefix(stdout.String(), "inventory-mock ") {
		t.Errorf("--version = %q, %v", stdout.String(), err)
	}
}

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tests := []struct {
		name string
		env  map[string]string
		pets int
		want int
	}{
		{"small data set", nil, 64, 400},
		{"GOGC set by the user", map[string]string{"GOGC": "50"}, 64, 100},
		{"a million pets", nil, 1_000_000, 100},
	}
	for _, tt := range tests {
		debug.SetGCPercent(100)
		tuneGC(env(tt.env), tt.pets)
		if got := debug.SetGCPercent(100); got != tt.want {
			t.Errorf("%s: GC percent = %d; want %d", tt.name, got, tt.want)
		}
	}
}
