package mcp

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petstore/inventory-kit/spec"
)

// The resources' addresses.
const (
	specURI     = "inventory-mock://spec/openapi.yaml"
	adminURI    = "inventory-mock://admin/openapi.yaml"
	journalURI  = "inventory-mock://journal"
	journalTmpl = "inventory-mock://journal/{session}"
)

// addResources adds the spec document, the admin API's document and the
// journal (of every session, and of one) to s.
func addResources(s *sdk.Server, a *admin) {
	s.AddResource(&sdk.Resource{URI: specURI, Name: "contract", Title: "The contract (OpenAPI)", MIMEType: "application/yaml",
		Description: "The OpenAPI document the mock serves, as loaded (after a --watch reload, the new one)."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return text(req.Params.URI, "application/yaml", string(a.m.Contract().Raw)), nil
		})
	s.AddResource(&sdk.Resource{URI: adminURI, Name: "admin-api", Title: "The mock's admin API (OpenAPI)", MIMEType: "application/yaml",
		Description: "The admin API under /__admin/ that the tools call: sessions, the journal, records, latency and faults, the rate limit."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return text(req.Params.URI, "application/yaml", string(spec.AdminDocument)), nil
		})
	journal := func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		q := url.Values{}
		if name, ok := strings.CutPrefix(req.Params.URI, journalURI+"/"); ok {
			name, err := url.PathUnescape(name)
			if err != nil || name == "" {
				return nil, sdk.ResourceNotFoundError(req.Params.URI)
			}
			q.Set("session", name)
		}
		b, err := a.call(ctx, http.MethodGet, "/requests", q, nil)
		if err != nil {
			return nil, err
		}
		return text(req.Params.URI, "application/json", string(b)), nil
	}
	s.AddResource(&sdk.Resource{URI: journalURI, Name: "journal", Title: "The request journal", MIMEType: "application/json",
		Description: "The last 100 requests of every session, newest first, each with the contract's verdict and a curl line (list_requests filters it)."}, journal)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: journalTmpl, Name: "session-journal", Title: "A session's request journal", MIMEType: "application/json",
		Description: "The last 100 requests of one session, newest first, each with the contract's verdict and a curl line."}, journal)
}

// text is a resource's one text content.
func text(uri, mime, body string) *sdk.ReadResourceResult {
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}
}
