// Package spec holds the Pet Store Inventory contract, an OpenAPI 3.0.3
// document embedded in every binary, and the one place that loads it.
//
// Load parses a document with libopenapi, checks it against the OpenAPI
// schema, builds the request and response validator once, and lists the
// operations so that the mock can route them and the conformance suite can
// check them. A Contract is safe for concurrent use.
package spec

import (
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Document is the embedded contract, spec/openapi.yaml.
//
//go:embed openapi.yaml
var Document []byte

// A Contract is a loaded OpenAPI document with its validator.
type Contract struct {
	// Raw is the document as it was loaded, served by the mock at /openapi.yaml.
	Raw []byte
	// Model is the high-level libopenapi model of the document.
	Model *v3.Document
	// BasePath is the path of the first server URL, "/v1" for the embedded contract.
	BasePath string
	// Operations lists every operation in the document, sorted by path then method.
	Operations []*Operation

	validator validator.Validator
	schemas   schema_validation.SchemaValidator
}

// An Operation is one method on one path of the contract.
type Operation struct {
	ID         string // operationId; empty where the document gives none
	Method     string // upper case, as in net/http
	Path       string // the path template relative to BasePath, such as /inventory/{petId}
	Deprecated bool
	Stability  string // the x-stability extension, such as "experimental"; empty if absent
	Statuses   []int  // the documented response status codes, ascending
	PathItem   *v3.PathItem
	Operation  *v3.Operation
}

// Documents reports whether status is one of the operation's documented responses.
func (o *Operation) Documents(status int) bool {
	return slices.Contains(o.Statuses, status)
}

// Default loads the embedded contract.
func Default() (*Contract, error) {
	return Load(Document)
}

var (
	defaultOnce     sync.Once
	defaultContract *Contract
	defaultErr      error
)

// Shared returns the embedded contract, loaded once per process. Callers must
// not modify it.
func Shared() (*Contract, error) {
	defaultOnce.Do(func() { defaultContract, defaultErr = Default() })
	return defaultContract, defaultErr
}

// Load parses doc, checks it against the OpenAPI schema and builds its
// validator. It fails with every problem it found, so a broken document stops
// start-up with a message rather than a mock that half works.
func Load(doc []byte) (*Contract, error) {
	document, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("spec: parse: %w", err)
	}
	if v := document.GetVersion(); !strings.HasPrefix(v, "3.") {
		return nil, fmt.Errorf("spec: OpenAPI version %q is not supported, want 3.x", v)
	}
	model, err := document.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("spec: build model: %w", err)
	}
	if ok, verrs := schema_validation.ValidateOpenAPIDocument(document); !ok {
		msgs := make([]string, 0, len(verrs))
		for _, ve := range verrs {
			msgs = append(msgs, describeDocumentError(ve))
		}
		return nil, fmt.Errorf("spec: not a valid OpenAPI document:\n  %s", strings.Join(msgs, "\n  "))
	}
	c := &Contract{
		Raw:   doc,
		Model: &model.Model,
		validator: validator.NewValidatorFromV3Model(&model.Model,
			config.WithRegexCache(&sync.Map{}),
			// Keys are checked by the caller in constant time; the validator
			// only checks that a header is present.
			config.WithoutSecurityValidation(),
		),
		schemas: schema_validation.NewSchemaValidator(),
	}
	if len(model.Model.Servers) > 0 {
		c.BasePath = serverPath(model.Model.Servers[0])
	}
	if model.Model.Paths == nil {
		return nil, errors.New("spec: the document has no paths")
	}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			o := &Operation{
				ID:        op.OperationId,
				Method:    strings.ToUpper(method),
				Path:      path,
				PathItem:  item,
				Operation: op,
			}
			if op.Deprecated != nil {
				o.Deprecated = *op.Deprecated
			}
			if op.Extensions != nil {
				if n, ok := op.Extensions.Get("x-stability"); ok && n != nil {
					o.Stability = n.Value
				}
			}
			if op.Responses != nil {
				for code := range op.Responses.Codes.KeysFromOldest() {
					if s, err := strconv.Atoi(code); err == nil {
						o.Statuses = append(o.Statuses, s)
					}
				}
				sort.Ints(o.Statuses)
			}
			c.Operations = append(c.Operations, o)
		}
	}
	sort.Slice(c.Operations, func(i, j int) bool {
		a, b := c.Operations[i], c.Operations[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	return c, nil
}

// serverPath returns the path part of a server URL, with its variables
// replaced by their defaults: "https://{host}/v1" gives "/v1".
func serverPath(s *v3.Server) string {
	raw := s.URL
	if s.Variables != nil {
		for name, v := range s.Variables.FromOldest() {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// Operation returns the operation with the given operationId, or nil.
func (c *Contract) Operation(id string) *Operation {
	for _, o := range c.Operations {
		if o.ID == id {
			return o
		}
	}
	return nil
}

// Schema returns the named schema from components/schemas, or nil.
func (c *Contract) Schema(name string) *base.Schema {
	if c.Model.Components == nil || c.Model.Components.Schemas == nil {
		return nil
	}
	p, ok := c.Model.Components.Schemas.Get(name)
	if !ok || p == nil {
		return nil
	}
	return p.Schema()
}

// ValidateRequest checks a request for op against the document: path
// parameters, headers, content type and body. The request body is read and
// put back, so callers must bound its size first. The Authorization header is
// not checked here.
func (c *Contract) ValidateRequest(r *http.Request, op *Operation) []Problem {
	ok, errs := c.validator.ValidateHttpRequestSyncWithPathItem(r, op.PathItem, op.Path)
	if ok {
		return nil
	}
	return problems(errs)
}

// ValidateResponse checks a response to r against the document: the status
// is documented for the operation, and headers and body match it. The
// response body is read and put back.
func (c *Contract) ValidateResponse(r *http.Request, resp *http.Response) []Problem {
	// The validator does not strip a templated server's base path; match the
	// path relative to it, as the document writes it.
	if c.BasePath != "" && strings.HasPrefix(r.URL.Path, c.BasePath+"/") {
		r = r.Clone(r.Context())
		r.URL.Path = strings.TrimPrefix(r.URL.Path, c.BasePath)
		r.URL.RawPath = ""
	}
	ok, errs := c.validator.ValidateHttpResponse(r, resp)
	if ok {
		return nil
	}
	return problems(errs)
}

// ValidateValue checks a JSON value against the named component schema.
func (c *Contract) ValidateValue(schema string, data []byte) []Problem {
	s := c.Schema(schema)
	if s == nil {
		return []Problem{{Kind: KindSchema, Message: fmt.Sprintf("the document has no schema %q", schema)}}
	}
	ok, errs := c.schemas.ValidateSchemaBytes(s, data)
	if ok {
		return nil
	}
	return problems(errs)
}
