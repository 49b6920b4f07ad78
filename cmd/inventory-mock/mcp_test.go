package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdioCommand runs the mock as an editor starts it, with --mcp,
// and drives it with the SDK's client over its stdin and stdout: the
// tools change what the contract's API on its address answers, stdout
// carries JSON-RPC only (the logs go to stderr), and the mock stops when
// stdin ends.
func TestMCPStdioCommand(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr syncBuffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runReady(context.Background(), []string{"--addr", "127.0.0.1:0", "--mcp", "--api-key", "k-0123456789"}, env(nil), stdinR, stdoutW, &stderr, func(a string) { ready <- a })
		stdoutW.Close()
	}()
	// Every line on stdout must be a JSON-RPC message: copy them to the
	// client, checking each.
	clientR, clientW := io.Pipe()
	go func() {
		sc := bufio.NewScanner(stdoutR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Errorf("stdout carries a line that is not JSON-RPC: %q", sc.Text())
			}
			clientW.Write(append(sc.Bytes(), '\n'))
		}
		clientW.Close()
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run stopped before serving: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the mock did not start")
	}
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: clientR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatalf("connect over stdin and stdout: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "set_record", Arguments: map[string]any{"session": "editor", "key": 5, "fields": map[string]any{"quantity": 0}}})
	if err != nil || res.IsError {
		t.Fatalf("set_record: %v %v", err, res)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/inventory", nil)
	req.Header.Set("Authorization", "Bearer k-0123456789")
	req.Header.Set("X-Mock-Session", "editor")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `{"petId":5,"quantity":0,`) {
		t.Errorf("the API on %s does not show the tool's write: %s", addr, body)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_requests", Arguments: map[string]any{"session": "editor"}})
	if err != nil || res.IsError {
		t.Fatalf("list_requests: %v %v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, `"method":"GET"`) || strings.Contains(text, "k-0123456789") {
		t.Errorf("list_requests = %.300s; want the GET, without its key", text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_record", Arguments: map[string]any{"key": "five"}})
	if err != nil || !res.IsError {
		t.Errorf("get_record with a bad key: %v %v; want a tool error", err, res)
	}
	// The editor closes the session: the mock stops.
	cs.Close()
	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run = %v; want nil once stdin ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the mock did not stop when stdin ended")
	}
	if logs := stderr.String(); !strings.Contains(logs, "MCP on stdin and stdout") || !strings.Contains(logs, "stdin ended") {
		t.Errorf("stderr = %s; want the MCP lines", logs)
	}
}

func TestMCPFlagRefusedWithProxy(t *testing.T) {
	err := run(context.Background(), []string{"--mcp", "--proxy-to", "http://127.0.0.1:1"}, env(nil), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--mcp") {
		t.Errorf("run = %v; want a usage error naming --mcp", err)
	}
}
