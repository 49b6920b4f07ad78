package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
)

// TestPortInUse starts a mock on a port something listens on already: the
// message names --addr and says what to do.
func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = runRefused(t, []string{"--addr", ln.Addr().String()}, env(nil), io.Discard)
	if err == nil || cli.Code(err) != 2 || !strings.Contains(err.Error(), "--addr "+ln.Addr().String()+": the port is in use") {
		t.Errorf("run on a port in use = %v (exit %d); want exit 2 naming --addr and the port in use", err, cli.Code(err))
	}
}

// TestPlainHTTPToTheTLSPort sends plain HTTP to the HTTPS port: a 400 with
// the Error body every other error has, not net/http's line of text.
func TestPlainHTTPToTheTLSPort(t *testing.T) {
	addr, _ := start(t, []string{"--tls-self-signed"}, env(nil), io.Discard)
	resp, err := http.Get("http://" + addr + "/v1/inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Code    string
		Message string
		Status  int
	}
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" ||
		e.Code != httpapi.CodeHTTPSRequired || e.Status != 400 || !strings.Contains(e.Message, "https://") {
		t.Errorf("plain HTTP to the TLS port = %d %s %s; want 400 with an Error body, code %s, naming https://", resp.StatusCode, resp.Header.Get("Content-Type"), body, httpapi.CodeHTTPSRequired)
	}
}

// TestCertOutAppearsWhenListening checks --tls-cert-out: a file an earlier
// run left is gone before the mock listens, and the new one is there, whole,
// once it does, so a script may wait for the file and then connect.
func TestCertOutAppearsWhenListening(t *testing.T) {
	certFile := filepath.Join(t.TempDir(), "mock.pem")
	if err := os.WriteFile(certFile, []byte("a certificate of an earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, _ := start(t, []string{"--tls-self-signed", "--tls-cert-out", certFile}, env(nil), io.Discard)
	pemBytes, err := os.ReadFile(certFile) // start returns once the mock listens
	if err != nil {
		t.Fatalf("no certificate once the mock listens: %v", err)
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatalf("--tls-cert-out holds no PEM certificate: %q", pemBytes)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if served := conn.ConnectionState().PeerCertificates[0].Raw; !bytes.Equal(served, block.Bytes) {
		t.Error("the file holds another certificate than the one served")
	}
	entries, _ := os.ReadDir(filepath.Dir(certFile))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files; want the certificate alone (no temporary file left)", len(entries))
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if got, _ := get(t, client, "https://"+addr+"/healthz", ""); got != 200 {
		t.Errorf("/healthz over TLS, trusting the file = %d; want 200", got)
	}
}

// TestMaxConnections fills the mock's connections with idle keep-alive
// clients: one more is served, the one idle longest closed to make room,
// and never more than the cap are open.
func TestMaxConnections(t *testing.T) {
	const max = 4
	addr, _ := start(t, []string{"--max-connections", fmt.Sprint(max)}, env(nil), io.Discard)
	request := "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	open := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	ask := func(c net.Conn, r *bufio.Reader) error {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, request); err != nil {
			return err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	conns := make([]net.Conn, max)
	readers := make([]*bufio.Reader, max)
	for i := range conns {
		conns[i], readers[i] = open()
		if err := ask(conns[i], readers[i]); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		time.Sleep(10 * time.Millisecond) // each idle from its own time
	}
	extra, r := open()
	if err := ask(extra, r); err != nil {
		t.Fatalf("a connection past the cap: %v; want it served once an idle one is closed", err)
	}
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conns[0].Read(make([]byte, 1)); err == nil {
		t.Error("the connection idle longest is still open; want it closed to make room")
	}
	for i := 1; i < max; i++ {
		if err := ask(conns[i], readers[i]); err != nil {
			t.Errorf("connection %d, not the one idle longest: %v; want it still served", i, err)
		}
	}
}
