// Package mcp is the mock's Model Context Protocol server: the tools a
// coding assistant uses to read the contract, shape a session's records,
// switch latency, faults and the rate limit, read the journal and judge an
// exchange, each a thin layer over the admin API (mockserver.Server.Admin),
// called in process; and the spec document and the journal as resources.
//
// It speaks over two transports, both built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): stdio (ServeStdio, what
// inventory-mock --mcp runs on its stdin and stdout) and streamable HTTP
// (Handler, which mockserver.Config.MCP mounts at /__admin/mcp behind the
// admin key and the admin guard). Every result, resource and error passes
// through the mock's redactor before it leaves: no configured key, in any
// form the redactor knows, reaches the client.
package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// Name is the server's name in the MCP handshake.
const Name = "inventory-mock"

// New returns the MCP server of the mock m: its tools and resources. One
// server serves every session of both transports.
func New(m *mockserver.Server, version string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "Pet Store Inventory mock", Version: cmp.Or(version, "devel")}, &sdk.ServerOptions{
		Instructions: instructions,
		// No "logging" capability: the server sends no log messages.
		Capabilities: &sdk.ServerCapabilities{},
	})
	a := &admin{m: m, rd: m.Redactor()}
	addTools(s, a)
	addResources(s, a)
	s.AddReceivingMiddleware(redacting(a.rd))
	return s
}

const instructions = `This server controls a running inventory-mock: a stateful mock of the Pet Store Inventory contract (OpenAPI). ` +
	`Call describe_contract first: it names the operations, their statuses, the record schema and its key field, and what the mock chooses where the contract is silent. ` +
	`Records live in sessions: a client that sends X-Mock-Session: NAME reads and writes session NAME; without it, the session "default". ` +
	`Chaos rules (latency, faults, forced examples) and the rate limit apply to every session.`

// Handler returns what mockserver.Config.MCP takes: the streamable HTTP
// handler of the mock's MCP server, version its version. The mock serves
// it at /__admin/mcp behind the admin key and the admin guard (the Host
// check and the refusal of changes from pages of other origins), so the
// SDK's own localhost check is off: one guard, the mock's, which also
// honours --allowed-host. It is stateless: each POST is served whole, and
// nothing is kept between them. The server is built when first asked for,
// not at the mock's start-up.
func Handler(version string) func(*mockserver.Server) http.Handler {
	return func(m *mockserver.Server) http.Handler {
		h := sync.OnceValue(func() http.Handler {
			s := New(m, version)
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
				Stateless:                  true,
				JSONResponse:               true,
				DisableLocalhostProtection: true,
			})
		})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h().ServeHTTP(w, r) })
	}
}

// ServeStdio serves m's MCP server on in and out, newline-delimited
// JSON-RPC as the stdio transport speaks it, until in ends or ctx is done.
// Nothing else may write to out.
func ServeStdio(ctx context.Context, m *mockserver.Server, version string, in io.ReadCloser, out io.WriteCloser) error {
	err := New(m, version).Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// An admin calls the mock's admin API in process.
type admin struct {
	m      *mockserver.Server
	rd     *exchange.Redactor
	judges judges // judge_exchange's
}

// An apiError is an Error body the admin API answered.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s (the admin API answered %d %s)", e.Message, e.Status, e.Code)
}

// call sends one request to the admin API, path under /__admin, and
// returns the body of a 2xx answer; an error answer is an *apiError.
func (a *admin) call(ctx context.Context, method, path string, query url.Values, body any) (json.RawMessage, error) {
	var rb io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rb = bytes.NewReader(b)
	}
	u := spec.AdminBasePath() + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	r, err := http.NewRequestWithContext(ctx, method, "http://localhost"+u, rb)
	if err != nil {
		return nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	a.m.Admin().ServeHTTP(w, r)
	if w.Code >= 200 && w.Code < 300 {
		return w.Body.Bytes(), nil
	}
	e := &apiError{}
	if json.Unmarshal(w.Body.Bytes(), e) != nil || e.Message == "" {
		e = &apiError{Code: "internal", Message: http.StatusText(w.Code), Status: w.Code}
	}
	return nil, e
}

// get is call for a GET, decoding the answer into out.
func (a *admin) get(ctx context.Context, path string, query url.Values, out any) error {
	b, err := a.call(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
