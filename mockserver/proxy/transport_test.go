package proxy

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// TestLargeBodies streams bodies past the check limit both ways, whole,
// and says they were too large to check.
func TestLargeBodies(t *testing.T) {
	const size = 3 << 20
	big := bytes.Repeat([]byte("x"), size)
	var gotReq int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		atomic.StoreInt64(&gotReq, n)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("["))
		w.Write(big)
	}))
	defer backend.Close()
	addr, p := startProxy(t, backend.URL+"/v1", Config{BodyLimit: 64 << 10})
	resp, body := do(t, "GET", addr+"/v1/inventory", "")
	if resp.StatusCode != 200 || len(body) != size+1 || sha256.Sum256(body[1:]) != sha256.Sum256(big) {
		t.Fatalf("a 3 MiB answer: %d, %d bytes; want 200 and every byte", resp.StatusCode, len(body))
	}
	// A chunked upload of 3 MiB, and one with a length.
	for _, chunked := range []bool{true, false} {
		var rd io.Reader = bytes.NewReader(big)
		if chunked {
			rd = io.MultiReader(rd) // hides the length
		}
		req, _ := http.NewRequest("PATCH", addr+"/v1/inventory/3", rd)
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := atomic.LoadInt64(&gotReq); n != size {
			t.Errorf("chunked %v: the backend got %d bytes; want %d", chunked, n, size)
		}
	}
	settle(t, p, 3)
	var large []spec.Finding
	for _, f := range p.Findings().List() {
		if f.Rule == spec.RuleTooLarge {
			large = append(large, f)
		}
	}
	want := "listInventory body-too-large-to-check $ response,updateInventory body-too-large-to-check $ request,updateInventory body-too-large-to-check $ response"
	var got []string
	for _, f := range large {
		got = append(got, f.Operation+" "+f.Rule+" "+f.Path+" "+f.Where)
		if f.Severity != spec.SeverityWarning {
			t.Errorf("%s %s: severity %s; want a warning", f.Operation, f.Where, f.Severity)
		}
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("too-large findings %q; want %q", got, want)
	}
	for _, f := range large {
		if !strings.Contains(f.Message, "314572") || len(f.Example.Response.Body) > spec.DefaultExampleLimit {
			t.Errorf("%s: message %q, example body %d bytes; want the whole size and a cut example", f.Where, f.Message, len(f.Example.Response.Body))
		}
	}
}

// TestKeepAlive checks that the proxy reuses its connections to the backend.
func TestKeepAlive(t *testing.T) {
	var conns atomic.Int32
	backend := httptest.NewUnstartedServer(newMock(t))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	defer backend.Close()
	addr, _ := startProxy(t, backend.URL+"/v1", Config{})
	for range 50 {
		do(t, "GET", addr+"/v1/inventory", "")
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("50 requests in a row opened %d connections to the backend; want 1", n)
	}
}

// TestTLS talks to a backend over TLS with its certificate trusted from a
// file, with verification skipped, and refuses it otherwise.
func TestTLS(t *testing.T) {
	backend := httptest.NewUnstartedServer(newMock(t))
	backend.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	backend.StartTLS()
	defer backend.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: backend.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opts   TransportOptions
		status int
	}{
		{"trusted CA file", TransportOptions{CACertFile: ca}, 200},
		{"skip verify", TransportOptions{InsecureSkipVerify: true}, 200},
		{"system roots only", TransportOptions{}, 502},
	} {
		tr, err := NewTransport(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := startProxy(t, backend.URL+"/v1", Config{Transport: tr})
		if resp, body := do(t, "GET", addr+"/v1/inventory", ""); resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s; want %d", tc.name, resp.StatusCode, body, tc.status)
		}
	}
	if _, err := NewTransport(TransportOptions{CACertFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
		t.Error("a missing CA file: no error")
	}
}

// TestEncodedAnswers checks gzip answers: passed as they came, decoded for
// the checks; a coding the checks cannot read is a warning, not a finding.
func TestEncodedAnswers(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	var sawAcceptEncoding []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAcceptEncoding = append(sawAcceptEncoding, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("as") {
		case "good":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(`[{"petId":1,"quantity":2,"status":"sold"}]`))
		case "bad":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(`[{"petId":1,"quantity":2,"status":"lost"}]`))
		case "br":
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte{0x0b, 0x02, 0x80, 0x5b, 0x5d, 0x03})
		}
	}))
	defer backend.Close()
	addr, p := startProxy(t, backend.URL+"/v1", Config{})
	for _, as := range []string{"good", "bad", "br"} {
		req, _ := http.NewRequest("GET", addr+"/v1/inventory?as="+as, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Accept-Encoding", "gzip, br")
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if as != "br" && (resp.Header.Get("Content-Encoding") != "gzip" || !bytes.HasPrefix(body, []byte{0x1f, 0x8b})) {
			t.Errorf("%s: the answer reached the client decoded or without its Content-Encoding", as)
		}
	}
	if _, err := http.Get(addr + "/v1/inventory"); err != nil { // no Accept-Encoding of the client's: none is added
		t.Fatal(err)
	}
	settle(t, p, 4)
	if strings.Join(sawAcceptEncoding, "|") != "gzip, br|gzip, br|gzip, br|gzip" {
		t.Errorf("the backend saw Accept-Encoding %q; want the clients' own", sawAcceptEncoding)
	}
	got := rules(p.Findings().List())
	for _, want := range []string{"listInventory response-body-schema $[*].status", "listInventory body-encoding-unsupported header.Content-Encoding"} {
		if !slices.Contains(got, want) {
			t.Errorf("findings %q; want %q", got, want)
		}
	}
	if len(got) != 5 { // and the plain GET's: no key, and an empty body
		t.Errorf("findings %q; want 5", got)
	}
}

// TestBombsAtOnce: many clients at once get gzip bombs through the proxy
// (a few KiB that decode past the check limit). The bytes the exchanges
// hold for the checks never pass the budget; what finds it spent passes
// unchecked, byte for byte, with a warning that names the bound; nothing
// waits on it; and every byte taken is given back.
func TestBombsAtOnce(t *testing.T) {
	const limit, clients = 64 << 10, 32
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte{'['}, 4<<20))
	zw.Close()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	}))
	defer backend.Close()
	for _, enforce := range []bool{false, true} {
		addr, p := startProxy(t, backend.URL+"/v1", Config{BodyLimit: limit, Budget: 4 * limit, Enforce: enforce})
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: clients}
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("GET", addr+"/v1/inventory", nil)
				req.Header.Set("Authorization", "Bearer "+testKey)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if body, _ := io.ReadAll(resp.Body); !enforce && !bytes.Equal(body, bomb.Bytes()) {
					t.Errorf("the client got %d bytes; want the bomb's %d as sent", len(body), bomb.Len())
				}
			}()
		}
		wg.Wait()
		settle(t, p, clients)
		if peak, size := p.budget.peak.Load(), p.budget.size; peak > size || peak == 0 {
			t.Errorf("enforce %v: %d bytes held for the checks at most; want some, and at most the budget's %d", enforce, peak, size)
		}
		if held := p.budget.held.Load(); held != 0 {
			t.Errorf("enforce %v: %d bytes still held after every exchange was recorded", enforce, held)
		}
		// Each bomb is warned about once: decoded past the limit (too
		// large to check), or left unchecked for want of the budget (the
		// capture's "more than the 0 bytes kept", or "not decoded: the
		// proxy held its bound"). Findings group by rule, keeping the
		// first message, so they are counted by rule.
		var warned int64
		for _, f := range p.Findings().List() {
			if f.Rule == spec.RuleTooLarge || f.Rule == spec.RuleBodyEncoding {
				warned += f.Count
			}
		}
		t.Logf("enforce %v: %d of %d KiB held at most, %d takes refused", enforce, p.budget.peak.Load()>>10, p.budget.size>>10, p.budget.refused.Load())
		if warned != clients {
			t.Errorf("enforce %v: %d bodies warned about as unchecked; want each of the %d: %q", enforce, warned, clients, rules(p.Findings().List()))
		}
	}
}

// TestRequestBodiesInBudget: request bodies held for the checks come out
// of the budget answers are held in. With room for two, of six requests
// in flight at once two are checked and four pass unchecked, whole, with a
// warning; nothing waits on the budget, and every byte taken is given
// back.
func TestRequestBodiesInBudget(t *testing.T) {
	const limit, clients, held = 64 << 10, 6, 2
	body := `{"quantity":` + strings.Repeat(" ", 40<<10) + `5}`
	for _, enforce := range []bool{false, true} {
		var arrived sync.WaitGroup
		arrived.Add(clients)
		all := make(chan struct{})
		go func() { arrived.Wait(); close(all) }()
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if b, _ := io.ReadAll(r.Body); string(b) != body {
				t.Errorf("the backend got %d bytes; want the %d sent", len(b), len(body))
			}
			arrived.Done()
			select { // every request is in flight before any is answered
			case <-all:
			case <-time.After(10 * time.Second):
				t.Error("the requests did not all reach the backend within 10s")
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}))
		defer backend.Close()
		addr, p := startProxy(t, backend.URL+"/v1", Config{BodyLimit: limit, Budget: held * int64(len(body)+1), Enforce: enforce})
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() { do(t, "PATCH", addr+"/v1/inventory/3", body, "Content-Type", "application/json") })
		}
		wg.Wait()
		settle(t, p, clients)
		var warned int64
		for _, f := range p.Findings().List() {
			if f.Rule == spec.RuleTooLarge && strings.Contains(f.Message, "request body") && strings.Contains(f.Message, "more than the 0 bytes kept") {
				warned += f.Count
			}
		}
		if warned != clients-held {
			t.Errorf("enforce %v: %d request bodies unchecked with a warning; want %d (findings %q)", enforce, warned, clients-held, rules(p.Findings().List()))
		}
		if peak, size := p.budget.peak.Load(), p.budget.size; peak > size || peak == 0 {
			t.Errorf("enforce %v: %d bytes held for the checks at most; want some, and at most the budget's %d", enforce, peak, size)
		}
		if n := p.budget.held.Load(); n != 0 {
			t.Errorf("enforce %v: %d bytes still held after every exchange was recorded", enforce, n)
		}
	}
}
