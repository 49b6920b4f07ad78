package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/jsonschema/v6/kind"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// A Schema is one schema of the document, compiled once for validation.
// Validate runs only the compiled schema: no rendering, hashing or look-up
// per call. A Schema is safe for concurrent use.
type Schema struct {
	// Name is the component name, such as "InventoryItem", where the schema
	// is one or refers to one; empty for an inline schema.
	Name string
	// Model is the schema as the document writes it, for reading its
	// properties, types, enums and bounds.
	Model *base.Schema

	compiled *jsonschema.Schema
	quick    *quick // nil: every value goes to compiled
	compiler *compiler
	props    sync.Map // property name to its *Schema, compiled on first use
	rules    string   // the rendered schema without annotations, canonical JSON: equal rules, equal strings
	bits     int      // 32 or 64 where the schema is a plain integer of that format (0: not one)
	purpose  schema_validation.SchemaValidationPurpose

	itemsOnce sync.Once
	items     *Schema              // where the schema is a plain array (type and items only), its items' schema; see items.go
	valid     *hashCache[struct{}] // items of a plain array found valid
}

// compiler holds what every compilation of one document shares.
type compiler struct {
	options *config.ValidationOptions
	version float32

	mu    sync.Mutex // guards cache
	cache map[compiled]*Schema

	// rendered counts the bytes of every schema compiled so far, each
	// with what it references inlined: what compiling costs grows with
	// it. While the document loads, past MaxRendered is an error.
	rendered atomic.Int64
	loading  atomic.Bool
}

// Bounds of what a document may make the loader build, so that it cannot
// take the memory of the machine (the package README has the figures).
const (
	// MaxDocument is the most bytes a document may have, its
	// referenced files included.
	MaxDocument = 2 << 20
	// MaxEnum is the most values one enum may list.
	MaxEnum = 10_000
	// MaxRendered is the most bytes the schemas compiled while a
	// document loads may render to, each with its references inlined.
	MaxRendered = 8 << 20
)

// compiled names a schema compiled for a direction: a $ref is compiled
// once, however many operations use it.
type compiled struct {
	name    string
	purpose schema_validation.SchemaValidationPurpose
}

func newCompiler(version float32) *compiler {
	return &compiler{
		// Formats are asserted, so int32 and int64 bounds and date-time
		// strings are checked as the document states them.
		options: config.NewValidationOptions(config.WithFormatAssertions(), config.WithRegexCache(&sync.Map{})),
		version: version,
		cache:   map[compiled]*Schema{},
	}
}

// compileNamed is compile, once per name and direction.
func (c *compiler) compileNamed(name string, proxy *base.SchemaProxy, purpose schema_validation.SchemaValidationPurpose) (*Schema, error) {
	key := compiled{name, purpose}
	c.mu.Lock()
	s, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := c.build(proxy, purpose)
	if err != nil {
		return nil, err
	}
	s.Name = name[strings.LastIndexByte(name, '/')+1:] // before it is shared
	c.mu.Lock()
	if prev, ok := c.cache[key]; ok {
		s = prev
	} else {
		c.cache[key] = s
	}
	c.mu.Unlock()
	return s, nil
}

// compile compiles proxy's schema for the given direction: a request body
// ignores readOnly properties in required, a response body writeOnly ones.
func (c *compiler) compile(proxy *base.SchemaProxy, purpose schema_validation.SchemaValidationPurpose) (*Schema, error) {
	if proxy == nil {
		return nil, nil
	}
	if ref := proxy.GetReference(); ref != "" {
		return c.compileNamed(ref, proxy, purpose)
	}
	return c.build(proxy, purpose)
}

func (c *compiler) build(proxy *base.SchemaProxy, purpose schema_validation.SchemaValidationPurpose) (*Schema, error) {
	model := proxy.Schema()
	if model == nil {
		if err := proxy.GetBuildError(); err != nil {
			return nil, err
		}
		return nil, errors.New("the schema could not be built")
	}
	compiled, err := schema_validation.CompileSchemaForValidation(model, purpose, c.options, c.version)
	if err != nil {
		return nil, err
	}
	if n := c.rendered.Add(int64(len(compiled.RenderedJSON))); n > MaxRendered && c.loading.Load() {
		return nil, fmt.Errorf("the document's schemas, each with what it references inlined, render to more than %d MiB (a large enum referenced from many schemas does this): the mock bounds what a document may make it build; make the enum smaller or reference it from fewer places", MaxRendered>>20)
	}
	s := &Schema{Model: model, compiled: compiled.CompiledSchema, compiler: c, purpose: purpose}
	var rules map[string]any
	s.rules, s.bits, rules = rulesOf(compiled.RenderedJSON)
	// readOnly and writeOnly change what the validator accepts in one
	// direction; rulesOf leaves them out, so no quick check decides there.
	if !bytes.Contains(compiled.RenderedJSON, []byte(`"readOnly"`)) && !bytes.Contains(compiled.RenderedJSON, []byte(`"writeOnly"`)) {
		s.quick = newQuick(rules)
	}
	return s, nil
}

// Validate checks a decoded JSON value (as DecodeJSON returns it) against
// the schema. Each Problem names the field it is about, such as
// "quantity" or "[3].status"; the Kind is KindSchema, which callers change
// to say where the value came from.
func (s *Schema) Validate(v any) []Problem {
	if s.quick != nil {
		if ps, ok := s.quick.decide(v); ok {
			return ps
		}
	}
	return s.validate(v)
}

func (s *Schema) validate(v any) []Problem {
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Kind: KindSchema, Message: err.Error()}}
	}
	var out []Problem
	collect(ve, &out)
	if len(out) == 0 {
		out = append(out, Problem{Kind: KindSchema, Message: "does not match the schema"})
	}
	return out
}

// ValidateJSON decodes data with DecodeJSON and validates it.
func (s *Schema) ValidateJSON(data []byte) []Problem {
	v, err := DecodeJSON(data)
	if err != nil {
		je := err.(*JSONError)
		return []Problem{{Kind: KindSchema, Field: je.Field, Message: je.Reason}}
	}
	return s.Validate(v)
}

// annotations are the keywords that do not constrain a value.
var annotations = []string{"description", "title", "example", "examples", "deprecated", "$comment", "externalDocs", "xml", "readOnly", "writeOnly"}

// rulesOf renders a schema's constraints, without its annotations, as
// canonical JSON, tells whether it is a plain integer (type integer,
// format int32 or int64, and nothing else), and returns the constraints
// of an object schema, decoded.
func rulesOf(rendered []byte) (string, int, map[string]any) {
	v, err := DecodeJSON(rendered)
	if err != nil {
		return string(rendered), 0, nil
	}
	var strip func(any) any
	strip = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for _, a := range annotations {
				delete(v, a)
			}
			for k, e := range v {
				v[k] = strip(e)
			}
		case []any:
			for i, e := range v {
				v[i] = strip(e)
			}
		}
		return v
	}
	v = strip(v)
	m, _ := v.(map[string]any)
	bits := 0
	if len(m) == 2 && m["type"] == "integer" {
		switch m["format"] {
		case "int64":
			bits = 64
		case "int32":
			bits = 32
		}
	}
	return string(AppendJSON(nil, v)), bits, m
}

// SameRules reports whether two schemas accept exactly the same values
// because they say the same thing: the same constraints, whatever their
// descriptions. A value one has accepted need not be checked by the other.
func (s *Schema) SameRules(other *Schema) bool {
	return s != nil && other != nil && s.rules == other.rules
}

// Property returns the schema of the named property, compiled, or nil if
// the schema has no such property or it cannot be compiled.
func (s *Schema) Property(name string) *Schema {
	if s == nil || s.Model == nil || s.Model.Properties == nil {
		return nil
	}
	if p, ok := s.props.Load(name); ok {
		return p.(*Schema)
	}
	proxy, ok := s.Model.Properties.Get(name)
	if !ok || proxy == nil || s.compiler == nil {
		return nil
	}
	p, err := s.compiler.compile(proxy, schema_validation.SchemaValidationPurposeGeneric)
	if err != nil || p == nil {
		return nil
	}
	actual, _ := s.props.LoadOrStore(name, p)
	return actual.(*Schema)
}

// Type returns the schema's type other than "null", such as "integer", or
// "" where it gives none.
func (s *Schema) Type() string {
	if s == nil || s.Model == nil {
		return ""
	}
	return primaryType(s.Model.Type)
}

// PropertyNames returns the names of the schema's properties in the
// document's order.
func (s *Schema) PropertyNames() []string {
	if s == nil || s.Model == nil {
		return nil
	}
	return slices.Collect(s.Model.Properties.KeysFromOldest())
}

// Requires reports whether the schema lists name as a required property.
func (s *Schema) Requires(name string) bool {
	return s != nil && s.Model != nil && slices.Contains(s.Model.Required, name)
}

// printer renders the validator's own messages where collect has none.
var printer = message.NewPrinter(language.English)

// collect appends a Problem for each leaf of a validation error tree: the
// errors that say what was wrong, not the groups that hold them.
func collect(ve *jsonschema.ValidationError, out *[]Problem) {
	if len(ve.Causes) > 0 {
		switch ve.ErrorKind.(type) {
		case *kind.OneOf, *kind.AnyOf:
			// Say that no alternative matched, then why the first did not.
			*out = append(*out, Problem{Kind: KindSchema, Field: fieldPath(ve.InstanceLocation), Message: ve.ErrorKind.LocalizedString(printer)})
			collect(ve.Causes[0], out)
			return
		}
		for _, c := range ve.Causes {
			collect(c, out)
		}
		return
	}
	field := fieldPath(ve.InstanceLocation)
	add := func(field, msg string) { *out = append(*out, Problem{Kind: KindSchema, Field: field, Message: msg}) }
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			add(join(field, name), "required")
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			add(join(field, name), "not allowed: the contract has no such field here")
		}
	case *kind.Minimum:
		add(field, fmt.Sprintf("%s is out of range: below the minimum %s", FormatRat(k.Got), FormatRat(k.Want)))
	case *kind.Maximum:
		add(field, fmt.Sprintf("%s is out of range: above the maximum %s", FormatRat(k.Got), FormatRat(k.Want)))
	case *kind.ExclusiveMinimum:
		add(field, fmt.Sprintf("%s is out of range: it must be greater than %s", FormatRat(k.Got), FormatRat(k.Want)))
	case *kind.ExclusiveMaximum:
		add(field, fmt.Sprintf("%s is out of range: it must be less than %s", FormatRat(k.Got), FormatRat(k.Want)))
	case *kind.MultipleOf:
		add(field, fmt.Sprintf("%s is not a multiple of %s", FormatRat(k.Got), FormatRat(k.Want)))
	case *kind.Enum:
		add(field, fmt.Sprintf("%s is not one of %s", display(k.Got), strings.Join(mapped(k.Want, display), ", ")))
	case *kind.Format:
		msg := fmt.Sprintf("%s is not a valid %s", display(k.Got), k.Want)
		if k.Err != nil {
			msg += ": " + k.Err.Error()
		}
		add(field, msg)
	case *kind.MinProperties:
		add(field, fmt.Sprintf("has %d fields; at least %d are required", k.Got, k.Want))
	case *kind.Type:
		// The validator's own words, without its message printer: the
		// commonest error of a request, worded on every bad body.
		add(field, "got "+k.Got+", want "+strings.Join(k.Want, " or "))
	default:
		add(field, ve.ErrorKind.LocalizedString(printer))
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// FormatRat renders a number exactly where it is whole, else in decimal;
// nil as "?".
func FormatRat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return TrimDecimal(r.FloatString(20))
}

// TrimDecimal drops a decimal's trailing zeros, and its point if nothing
// follows it.
func TrimDecimal(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// display renders a JSON value for a message: strings quoted, numbers as
// written.
func display(v any) string {
	if n, ok := v.(json.Number); ok {
		return cut(n.String(), 40)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cut(fmt.Sprint(v), 80)
	}
	return cut(string(b), 80)
}
