package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
)

// send sends one request to url with key as its bearer token, and a
// session if not empty, and returns the status, the body and how long the
// answer took.
func send(t *testing.T, key, method, url, session, body string) (int, []byte, time.Duration) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if session != "" {
		r.Header.Set(mockserver.SessionHeader, session)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp.StatusCode, b, time.Since(start)
}
