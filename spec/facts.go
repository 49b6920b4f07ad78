package spec

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// Facts are what a schema says of the values it allows, read from the
// document once: the schema with every schema of its allOf merged in and
// the first branch of its oneOf and of its anyOf, $refs followed. The
// mock's record rules and generator and the suite's request bodies all
// read a value's rules here.
type Facts struct {
	Type       string   // the type other than null; inferred from the other keywords where none is given
	Format     string   // the first format given
	Nullable   bool     // null is allowed: type null, or nullable: true
	Enum       [][]byte // the allowed values as JSON, in every enum and const; nil: any
	Min, Max   *Bound   // the tightest bounds; nil: none
	MultipleOf *big.Rat // the least common multiple of every multipleOf; nil: none
	MinLength  int64    // the longest minLength
	MaxLength  int64    // the shortest maxLength; -1: none
	Patterns   []string // every pattern; a string matches them all
	Properties []string // property names, in the order they first appear
	Required   []string // required property names
	// MinProperties is the largest minProperties; Closed reports
	// additionalProperties: false.
	MinProperties int64
	Closed        bool
	MinItems      int64
	MaxItems      int64 // -1: none
	UniqueItems   bool

	propOf map[string][]*base.SchemaProxy
	items  []*base.SchemaProxy
}

// A Bound is a numeric bound, exactly as the document writes it (0.1 is
// 1/10, not the float64 nearest it).
type Bound struct {
	Value     *big.Rat
	Exclusive bool
}

// maxNesting bounds how deep allOf, oneOf, anyOf, properties and items
// are followed: a schema that requires itself is refused past it.
const maxNesting = 16

// FactsOf reads the schemas one value must keep at once.
func FactsOf(proxies ...*base.SchemaProxy) (*Facts, error) {
	f := &Facts{MaxLength: -1, MaxItems: -1, propOf: map[string][]*base.SchemaProxy{}}
	var add func(p *base.SchemaProxy, depth int) error
	add = func(p *base.SchemaProxy, depth int) error {
		if depth > maxNesting {
			return fmt.Errorf("allOf, oneOf and anyOf nested deeper than %d levels", maxNesting)
		}
		m, err := schemaOf(p)
		if err != nil {
			return err
		}
		if err := f.merge(m); err != nil {
			return err
		}
		for _, q := range m.AllOf {
			if err := add(q, depth+1); err != nil {
				return err
			}
		}
		// Of oneOf and anyOf, the first branch: a value of the first
		// branch is one of either.
		for _, branches := range [][]*base.SchemaProxy{m.OneOf, m.AnyOf} {
			if len(branches) > 0 {
				if err := add(branches[0], depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, p := range proxies {
		if err := add(p, 0); err != nil {
			return nil, err
		}
	}
	f.infer()
	return f, nil
}

// schemaOf resolves a schema, its $ref followed.
func schemaOf(p *base.SchemaProxy) (*base.Schema, error) {
	if p == nil {
		return nil, fmt.Errorf("no schema")
	}
	m := p.Schema()
	if m == nil {
		if err := p.GetBuildError(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the schema %s cannot be resolved", p.GetReference())
	}
	return m, nil
}

func (f *Facts) merge(m *base.Schema) error {
	if t := primaryType(m.Type); t != "" {
		switch {
		case f.Type == "" || f.Type == t:
			f.Type = t
		case f.Type == "integer" && t == "number" || f.Type == "number" && t == "integer":
			f.Type = "integer" // every integer is a number
		default:
			return fmt.Errorf("allOf gives the types %s and %s, which no value has at once", f.Type, t)
		}
	}
	if slices.Contains(m.Type, "null") || m.Nullable != nil && *m.Nullable {
		f.Nullable = true
	}
	f.Format = cmp.Or(f.Format, m.Format)
	var values [][]byte
	for _, n := range append(slices.Clip(m.Enum), m.Const) {
		if n == nil {
			continue
		}
		b, err := enumValue(n.Tag, n.Value)
		if err != nil {
			return err
		}
		values = append(values, b)
	}
	if m.Const != nil {
		values = values[len(values)-1:] // const allows its one value
	}
	if values != nil {
		if f.Enum != nil {
			values = slices.DeleteFunc(values, func(b []byte) bool {
				return !slices.ContainsFunc(f.Enum, func(e []byte) bool { return string(e) == string(b) })
			})
			if len(values) == 0 {
				return fmt.Errorf("no value is in every enum of its allOf")
			}
		}
		f.Enum = values
	}
	if b := readBound(m.Minimum, m.ExclusiveMinimum, 1); b != nil && (f.Min == nil || b.Value.Cmp(f.Min.Value) > 0 || b.Value.Cmp(f.Min.Value) == 0 && b.Exclusive) {
		f.Min = b
	}
	if b := readBound(m.Maximum, m.ExclusiveMaximum, -1); b != nil && (f.Max == nil || b.Value.Cmp(f.Max.Value) < 0 || b.Value.Cmp(f.Max.Value) == 0 && b.Exclusive) {
		f.Max = b
	}
	if m.MultipleOf != nil && *m.MultipleOf > 0 {
		f.MultipleOf = lcm(f.MultipleOf, exactRat(*m.MultipleOf))
	}
	if m.MinLength != nil {
		f.MinLength = max(f.MinLength, *m.MinLength)
	}
	if m.MaxLength != nil && (f.MaxLength < 0 || *m.MaxLength < f.MaxLength) {
		f.MaxLength = *m.MaxLength
	}
	if m.Pattern != "" {
		f.Patterns = append(f.Patterns, m.Pattern)
	}
	for name, p := range m.Properties.FromOldest() {
		if f.propOf[name] == nil {
			f.Properties = append(f.Properties, name)
		}
		f.propOf[name] = append(f.propOf[name], p)
	}
	for _, name := range m.Required {
		if !slices.Contains(f.Required, name) {
			f.Required = append(f.Required, name)
		}
	}
	if m.MinProperties != nil {
		f.MinProperties = max(f.MinProperties, *m.MinProperties)
	}
	if ap := m.AdditionalProperties; ap != nil && ap.IsB() && !ap.B {
		f.Closed = true
	}
	if m.Items != nil && m.Items.IsA() {
		f.items = append(f.items, m.Items.A)
	}
	if m.MinItems != nil {
		f.MinItems = max(f.MinItems, *m.MinItems)
	}
	if m.MaxItems != nil && (f.MaxItems < 0 || *m.MaxItems < f.MaxItems) {
		f.MaxItems = *m.MaxItems
	}
	if m.UniqueItems != nil && *m.UniqueItems {
		f.UniqueItems = true
	}
	return nil
}

// infer gives facts without a type the type their other keywords are
// for; a number of an integer format is an integer.
func (f *Facts) infer() {
	for _, name := range f.Required {
		if f.propOf[name] == nil {
			f.Properties = append(f.Properties, name) // required, any value: a string
			f.propOf[name] = []*base.SchemaProxy{}
		}
	}
	switch {
	case f.Type == "number" && (f.Format == "int32" || f.Format == "int64"):
		f.Type = "integer"
	case f.Type != "":
	case len(f.Properties) > 0:
		f.Type = "object"
	case len(f.items) > 0 || f.MinItems > 0:
		f.Type = "array"
	case f.Format == "int32" || f.Format == "int64":
		f.Type = "integer"
	case f.Min != nil || f.Max != nil || f.MultipleOf != nil:
		f.Type = "number"
	default:
		f.Type = "string"
	}
}

// Property returns the facts of the named property, merged across every
// schema that gives it.
func (f *Facts) Property(name string) (*Facts, error) {
	return FactsOf(f.propOf[name]...)
}

// Items returns the facts of an array's items.
func (f *Facts) Items() (*Facts, error) { return FactsOf(f.items...) }

// Requires reports whether the named property is required.
func (f *Facts) Requires(name string) bool { return slices.Contains(f.Required, name) }

// IntBounds returns the smallest and largest integers the stated bounds
// allow, nil for a side the schema states no bound on (the format's
// range is not a stated bound).
func (f *Facts) IntBounds() (lo, hi *big.Int) {
	if f.Min != nil {
		lo = intAbove(f.Min.Value, f.Min.Exclusive)
	}
	if f.Max != nil {
		hi = intBelow(f.Max.Value, f.Max.Exclusive)
	}
	return lo, hi
}

// formatRange returns the range an integer format implies (int32, int64),
// nil for none.
func (f *Facts) formatRange() (lo, hi *big.Int) {
	switch {
	case f.Type != "integer":
	case f.Format == "int32":
		return big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	case f.Format == "int64":
		return big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	}
	return nil, nil
}

// Lowest returns the smallest integer the schema allows, its format
// included, or nil where it states no lower bound.
func (f *Facts) Lowest() *big.Int {
	lo, _ := f.IntBounds()
	if flo, _ := f.formatRange(); flo != nil && (lo == nil || lo.Cmp(flo) < 0) {
		return flo
	}
	return lo
}

// Highest returns the largest integer the schema allows, or nil.
func (f *Facts) Highest() *big.Int {
	_, hi := f.IntBounds()
	if _, fhi := f.formatRange(); fhi != nil && (hi == nil || hi.Cmp(fhi) > 0) {
		return fhi
	}
	return hi
}

// readBound reads one schema's own bound from its inclusive keyword and
// its exclusive one, as OpenAPI 3.0 (minimum and a boolean
// exclusiveMinimum) or 3.1 (a number exclusiveMinimum) writes it, the
// tighter where 3.1 gives both; nil where it gives none. sign is 1 for a
// lower bound, -1 for an upper one.
func readBound(inclusive *float64, exclusive *base.DynamicValue[bool, float64], sign int) *Bound {
	var b *Bound
	if inclusive != nil {
		b = &Bound{Value: exactRat(*inclusive), Exclusive: exclusive != nil && exclusive.IsA() && exclusive.A}
	}
	if exclusive != nil && exclusive.IsB() {
		e := &Bound{Value: exactRat(exclusive.B), Exclusive: true}
		if b == nil || e.Value.Cmp(b.Value)*sign >= 0 {
			b = e
		}
	}
	return b
}

// exactRat returns a number of the document exactly as it is written there:
// the shortest decimal that gives f back.
func exactRat(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		r = new(big.Rat).SetFloat64(f)
	}
	return r
}

// intAbove returns the least integer at or above r, or above it where
// exclusive; intBelow the greatest at or below it, or below it.
func intAbove(r *big.Rat, exclusive bool) *big.Int {
	q := intBelow(r, false)
	if exclusive || !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func intBelow(r *big.Rat, exclusive bool) *big.Int {
	q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean division by a positive denominator floors
	if exclusive && r.IsInt() {
		q.Sub(q, big.NewInt(1))
	}
	return q
}

// lcm returns the least common multiple of two positive rationals (a nil
// a is none): lcm(p1/q1, p2/q2) = lcm(p1, p2) / gcd(q1, q2).
func lcm(a, b *big.Rat) *big.Rat {
	if a == nil {
		return b
	}
	g := new(big.Int).GCD(nil, nil, a.Num(), b.Num())
	num := new(big.Int).Mul(a.Num(), new(big.Int).Quo(b.Num(), g))
	den := new(big.Int).GCD(nil, nil, a.Denom(), b.Denom())
	return new(big.Rat).SetFrac(num, den)
}

// enumValue renders one enum value, as YAML gives it, as JSON.
func enumValue(tag, value string) ([]byte, error) {
	switch tag {
	case "!!str", "":
		return AppendString(nil, value), nil
	case "!!int", "!!float", "!!bool":
		return []byte(value), nil
	case "!!null":
		return []byte("null"), nil
	}
	return nil, fmt.Errorf("enum value %q (%s) is not a scalar", value, tag)
}
