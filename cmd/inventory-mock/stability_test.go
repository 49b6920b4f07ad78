package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStabilityIsTold checks that experimental operations are told of in
// --help, in the start-up log, and to clients in the X-Stability header.
func TestStabilityIsTold(t *testing.T) {
	var help bytes.Buffer
	run(context.Background(), []string{"--help"}, env(nil), &help, &help)
	if !strings.Contains(help.String(), "x-stability") || !strings.Contains(help.String(), "X-Stability: experimental") {
		t.Errorf("--help says nothing of x-stability and the X-Stability header:\n%s", help.String())
	}

	var logs syncBuffer
	addr, _ := start(t, nil, env(nil), &logs)
	if want := `msg="operation is experimental" operation=updateInventory header="X-Stability: experimental"`; !strings.Contains(logs.String(), want) {
		t.Errorf("start-up log lacks %s:\n%s", want, logs.String())
	}
	req, _ := http.NewRequest("PATCH", "http://"+addr+"/v1/inventory/3", strings.NewReader(`{"quantity": 5}`))
	req.Header.Set("Authorization", "Bearer inventory-dev-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Stability") != "experimental" {
		t.Errorf("PATCH: %d, X-Stability %q; want 200 with X-Stability: experimental", resp.StatusCode, resp.Header.Get("X-Stability"))
	}
}
