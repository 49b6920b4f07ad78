// Package spec holds the Pet Store Inventory contract, an OpenAPI 3.0.3
// document embedded in every binary, and the one place that loads it and
// plans the checks of each operation once (see the package README). A
// Contract is safe for concurrent use.
package spec

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Document is the embedded contract, spec/openapi.yaml.
//
//go:embed openapi.yaml
var Document []byte

// AdminDocument describes the mock's own admin endpoints under /__admin/,
// spec/admin.yaml. The mock validates admin requests with it, as it does
// the contract's.
//
//go:embed admin.yaml
var AdminDocument []byte

// A Contract is a loaded OpenAPI document, every schema it validates with
// compiled once.
type Contract struct {
	// Raw is the document as it was loaded, served by the mock at /openapi.yaml.
	Raw []byte
	// Model is the high-level libopenapi model of the document.
	Model *v3.Document
	// Version is the document's OpenAPI version as a number, such as 3.0.
	Version float32
	// BasePath is the path of the first server URL, "/v1" for the embedded contract.
	BasePath string
	// Operations lists every operation in the document, sorted by path then method.
	Operations []*Operation

	compiler  *compiler
	inventory func() (*Inventory, error) // readInventory, once
}

// An Operation is one method on one path of the contract, with the checks
// its requests and responses get, planned and compiled at load time.
type Operation struct {
	ID         string // operationId; empty where the document gives none
	Method     string // upper case, as in net/http
	Path       string // the path template relative to BasePath, such as /inventory/{petId}
	Deprecated bool
	Stability  string // the x-stability extension, such as "experimental"; empty if absent
	Statuses   []int  // the documented numeric response codes, ascending
	PathItem   *v3.PathItem
	Operation  *v3.Operation

	Params    []*Param    // path, query and header parameters
	Body      *Body       // the request body; nil if the operation takes none
	Responses []*Response // the documented responses, in document order, default last

	route route
}

// Shared returns the embedded contract, loaded once per process. It is not
// checked against the OpenAPI schema when it loads, which is a third of
// the time loading takes: a test checks it (TestEmbeddedDocumentsAreValid).
// Callers must not modify it.
var Shared = sync.OnceValues(func() (*Contract, error) { return load(Document, false) })

// Admin returns the admin API's document, loaded once per process and not
// checked, as Shared. Loading it is most of the mock's start-up, so the
// mock loads it when its admin API is first used, and routes /__admin/
// with AdminBasePath until then.
var Admin = sync.OnceValues(func() (*Contract, error) { return load(AdminDocument, false) })

// AdminBasePath returns the BasePath Admin's document has, read from its
// first server alone, once per process, in a fraction of a millisecond
// (TestAdminBasePath checks that it is Admin's).
var AdminBasePath = sync.OnceValue(func() string {
	var doc struct {
		Servers []struct {
			URL       string `yaml:"url"`
			Variables map[string]struct {
				Default string `yaml:"default"`
			} `yaml:"variables"`
		} `yaml:"servers"`
	}
	if err := yaml.Unmarshal(AdminDocument, &doc); err != nil || len(doc.Servers) == 0 {
		return ""
	}
	defaults := map[string]string{}
	for name, v := range doc.Servers[0].Variables {
		defaults[name] = v.Default
	}
	return urlPath(doc.Servers[0].URL, defaults)
})

// Load parses doc, checks it against the OpenAPI schema and compiles the
// checks of every operation and component schema. It fails with every
// problem it found, so a broken document stops start-up with a message
// rather than a mock that half works.
func Load(doc []byte) (*Contract, error) { return load(doc, true) }

// load is Load, the check against the OpenAPI schema made where check is.
func load(doc []byte, check bool) (*Contract, error) {
	if len(doc) > MaxDocument {
		return nil, fmt.Errorf("spec: the document has %d bytes, more than the %d MiB the mock loads", len(doc), MaxDocument>>20)
	}
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
	if idx := model.Index; idx != nil {
		for _, e := range idx.GetAllEnums() {
			if e.Node != nil && len(e.Node.Content) > MaxEnum {
				return nil, fmt.Errorf("spec: %s: an enum of %d values; the mock loads at most %d in one enum", e.Path, len(e.Node.Content), MaxEnum)
			}
		}
	}
	if check {
		if ok, verrs := schema_validation.ValidateOpenAPIDocument(document); !ok {
			return nil, fmt.Errorf("spec: not a valid OpenAPI document:\n  %s", strings.Join(mapped(verrs, describeDocumentError), "\n  "))
		}
	}
	version := helpers.VersionToFloat(document.GetVersion())
	c := &Contract{
		Raw:      doc,
		Model:    &model.Model,
		Version:  version,
		compiler: newCompiler(version),
	}
	c.inventory = sync.OnceValues(c.readInventory)
	c.compiler.loading.Store(true)
	defer c.compiler.loading.Store(false)
	if len(model.Model.Servers) > 0 {
		c.BasePath = serverPath(model.Model.Servers[0])
	}
	if model.Model.Paths == nil {
		return nil, errors.New("spec: the document has no paths")
	}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			o := &Operation{
				ID:         op.OperationId,
				Method:     strings.ToUpper(method),
				Path:       path,
				Deprecated: op.Deprecated != nil && *op.Deprecated,
				PathItem:   item,
				Operation:  op,
				route:      strings.Split(strings.Trim(path, "/"), "/"),
			}
			if op.Extensions != nil {
				if n, ok := op.Extensions.Get("x-stability"); ok && n != nil {
					o.Stability = n.Value
				}
			}
			if o.Params, o.Body, err = planRequest(c.compiler, item, op); err != nil {
				return nil, fmt.Errorf("spec: %s: %w", o.Name(), err)
			}
			if o.Responses, err = planResponses(c.compiler, op); err != nil {
				return nil, fmt.Errorf("spec: %s: %w", o.Name(), err)
			}
			for _, r := range o.Responses {
				if s, err := strconv.Atoi(r.Code); err == nil {
					o.Statuses = append(o.Statuses, s)
				}
			}
			slices.Sort(o.Statuses)
			c.Operations = append(c.Operations, o)
		}
	}
	slices.SortFunc(c.Operations, func(a, b *Operation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method))
	})
	return c, nil
}

// serverPath returns the path part of a server URL, with its variables
// replaced by their defaults: "https://{host}/v1" gives "/v1".
func serverPath(s *v3.Server) string {
	defaults := map[string]string{}
	for name, v := range s.Variables.FromOldest() {
		defaults[name] = v.Default
	}
	return urlPath(s.URL, defaults)
}

// urlPath is the path of a server URL, its variables replaced by their
// defaults, without a trailing slash.
func urlPath(raw string, defaults map[string]string) string {
	for name, v := range defaults {
		raw = strings.ReplaceAll(raw, "{"+name+"}", v)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// Operation returns the operation with the given operationId, or nil.
func (c *Contract) Operation(id string) *Operation {
	if i := slices.IndexFunc(c.Operations, func(o *Operation) bool { return o.ID == id }); i >= 0 {
		return c.Operations[i]
	}
	return nil
}

// Schema returns the named schema of components/schemas, compiled (on
// first use, once), or nil if there is none or it does not compile.
func (c *Contract) Schema(name string) *Schema {
	comp := c.Model.Components
	if comp == nil || comp.Schemas == nil {
		return nil
	}
	proxy, ok := comp.Schemas.Get(name)
	if !ok || proxy == nil {
		return nil
	}
	s, _ := c.compiler.compileNamed("#/components/schemas/"+name, proxy, schema_validation.SchemaValidationPurposeGeneric)
	return s
}
