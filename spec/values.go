package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// A Grid is the numbers a field takes that the suite writes: Step times
// every integer from Lo to Hi. Step is the schema's multipleOf (for an
// integer field, the smallest whole multiple of it), else 1, else, where
// no whole number lies between the bounds, the power of ten that fits.
type Grid struct {
	Lo, Hi *big.Int
	Step   *big.Rat
}

// Value returns the k-th value of the grid, k*Step.
func (g Grid) Value(k *big.Int) *big.Rat {
	return new(big.Rat).Mul(new(big.Rat).SetInt(k), g.Step)
}

// pick returns the value at offset off from the grid's start, wrapping.
func (g Grid) pick(off int64) *big.Rat {
	k := new(big.Int).Mod(big.NewInt(off), g.size())
	return g.Value(k.Add(k, g.Lo))
}

// Size returns how many values the grid holds, capped at the largest
// int64.
func (g Grid) Size() int64 { return ClampInt64(g.size()) }

func (g Grid) size() *big.Int {
	n := new(big.Int).Sub(g.Hi, g.Lo)
	return n.Add(n, big.NewInt(1))
}

// bounds returns the field's range: the stated bounds (format ranges
// included for integers), and where safe is set and a side is not stated,
// the suite's defaults there, stock counts from 0 to 1000 (within any one
// bound that is given).
func bounds(f *Facts, safe bool) (lo, hi *big.Rat, loEx, hiEx bool) {
	if f.Min != nil {
		lo, loEx = f.Min.Value, f.Min.Exclusive
	}
	if f.Max != nil {
		hi, hiEx = f.Max.Value, f.Max.Exclusive
	}
	if f.Type == "integer" {
		// A format alone is not a bound the suite writes to.
		stLo, stHi := f.IntBounds()
		lo, hi, loEx, hiEx = nil, nil, false, false
		if stLo != nil {
			lo = new(big.Rat).SetInt(f.Lowest())
		}
		if stHi != nil {
			hi = new(big.Rat).SetInt(f.Highest())
		}
	}
	if !safe {
		return lo, hi, loEx, hiEx
	}
	thousand := big.NewRat(1000, 1)
	switch {
	case lo == nil && hi == nil:
		lo, hi = new(big.Rat), thousand
	case hi == nil:
		hi = thousand
		if lo.Sign() > 0 {
			hi = new(big.Rat).Add(lo, thousand)
		}
	case lo == nil:
		lo = new(big.Rat)
		if hi.Cmp(thousand) < 0 && hi.Sign() <= 0 {
			lo = new(big.Rat).Sub(hi, thousand)
		}
	}
	return lo, hi, loEx, hiEx
}

// Grid returns the numbers of an integer or number field the suite
// writes, within the stated bounds and multipleOf (and the defaults where
// safe is set and the contract is silent); false when no number fits, or
// where !safe and a side has no stated bound.
func (f *Facts) Grid(safe bool) (Grid, bool) {
	lo, hi, loEx, hiEx := bounds(f, safe)
	if lo == nil || hi == nil {
		return Grid{}, false
	}
	step := big.NewRat(1, 1)
	switch {
	case f.MultipleOf != nil && f.Type == "integer":
		step = new(big.Rat).SetInt(new(big.Int).Abs(f.MultipleOf.Num()))
	case f.MultipleOf != nil:
		step = new(big.Rat).Abs(f.MultipleOf)
	case f.Type != "integer":
		for d := 0; d < 18; d++ {
			if g := gridBetween(lo, hi, loEx, hiEx, step); g.Lo.Cmp(g.Hi) <= 0 {
				return g, true
			}
			step = new(big.Rat).Quo(step, big.NewRat(10, 1))
		}
	}
	g := gridBetween(lo, hi, loEx, hiEx, step)
	return g, g.Lo.Cmp(g.Hi) <= 0
}

func gridBetween(lo, hi *big.Rat, loEx, hiEx bool, step *big.Rat) Grid {
	return Grid{Lo: intAbove(new(big.Rat).Quo(lo, step), loEx), Hi: intBelow(new(big.Rat).Quo(hi, step), hiEx), Step: step}
}

// Unsure reports whether the integer v is one the contract neither
// allows nor forbids plainly for f: within any stated bound (a format's
// range included) and on the multipleOf, but outside the range the suite
// writes expecting it accepted (from end to end of Grid(true)). A target
// may accept or refuse it.
func (f *Facts) Unsure(v *big.Int) bool {
	if lo := f.Lowest(); lo != nil && v.Cmp(lo) < 0 {
		return false
	}
	if hi := f.Highest(); hi != nil && v.Cmp(hi) > 0 {
		return false
	}
	if f.MultipleOf != nil && !new(big.Rat).Quo(new(big.Rat).SetInt(v), f.MultipleOf).IsInt() {
		return false
	}
	var lo, hi int64
	if g, ok := f.Grid(true); ok {
		lo, hi = ClampInt64(g.Value(g.Lo).Num()), ClampInt64(g.Value(g.Hi).Num())
	}
	return !v.IsInt64() || v.Int64() < lo || v.Int64() > hi
}

func ClampInt64(b *big.Int) int64 {
	switch {
	case b.IsInt64():
		return b.Int64()
	case b.Sign() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}

// NumberJSON renders a rational as a JSON number: an integer plainly, else
// the exact decimal (grid values always have one).
func NumberJSON(r *big.Rat) json.RawMessage {
	if r.IsInt() {
		return json.RawMessage(r.Num().String())
	}
	for d := 1; d <= 40; d++ {
		s := r.FloatString(d)
		if v, ok := new(big.Rat).SetString(s); ok && v.Cmp(r) == 0 {
			return json.RawMessage(strings.TrimRight(s, "0"))
		}
	}
	return json.RawMessage(r.FloatString(20))
}

// Accepts reports whether v is valid for the field: by its compiled
// schema where there is one, else by the pattern and lengths read.
func (f *Field) Accepts(v json.RawMessage) bool {
	if f.Schema != nil {
		d, err := DecodeJSON(v)
		return err == nil && len(f.Schema.Validate(d)) == 0
	}
	var s string
	if f.Type == "string" && json.Unmarshal(v, &s) == nil {
		n := int64(utf8.RuneCountInString(s))
		if n < f.MinLength || (f.MaxLength >= 0 && n > f.MaxLength) {
			return false
		}
		return !slices.ContainsFunc(f.Patterns, func(p string) bool {
			re, err := regexp.Compile(p)
			return err != nil || !re.MatchString(s)
		})
	}
	return true
}

// candidate renders the n-th value of the suite's choice for f, unchecked.
func candidate(f *Field, cur json.RawMessage, n int) json.RawMessage {
	switch {
	case len(f.Enum) > 0:
		i := 0
		for j, e := range f.Enum {
			if sameJSON(e, cur) {
				i = j + 1
			}
		}
		return f.Enum[(i+n)%len(f.Enum)]
	case f.Type == "integer" || f.Type == "number":
		g, ok := f.Grid(true)
		if !ok {
			return json.RawMessage("0")
		}
		return NumberJSON(g.pick(7 + int64(n)))
	case f.Type == "boolean":
		return json.RawMessage(fmt.Sprint(string(cur) != "true"))
	case f.Type == "string":
		return JSONString(stringCandidate(f, n))
	case f.Type == "array":
		return json.RawMessage("[]")
	}
	return json.RawMessage(`{}`)
}

// ValueFor renders a valid value of f different from cur (the current
// value, possibly nil), the n-th of the choices the suite makes: the first
// candidate from n on that the field's schema accepts.
func (f *Field) ValueFor(cur json.RawMessage, n int) json.RawMessage {
	first := candidate(f, cur, n)
	for try := range 16 {
		v := candidate(f, cur, n+try)
		if (cur == nil || !sameJSON(v, cur)) && f.Accepts(v) {
			return v
		}
	}
	return first
}

// stringCandidate is the n-th string for f: one of its format (date-time,
// date, email, uuid, uri, ipv4, ...), or matching its pattern, or
// "conformance-n", fitted to its lengths.
func stringCandidate(f *Field, n int) string {
	var s string
	switch f.Format {
	case "date-time":
		s = fmt.Sprintf("2026-01-02T03:04:%02dZ", n%60)
	case "date":
		s = fmt.Sprintf("2026-01-%02d", 1+n%28)
	case "time":
		s = fmt.Sprintf("03:04:%02dZ", n%60)
	case "email":
		s = fmt.Sprintf("conformance-%d@example.com", n)
	case "uuid":
		s = fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	case "uri", "url", "uri-reference", "iri":
		s = fmt.Sprintf("https://example.com/conformance/%d", n)
	case "hostname":
		s = fmt.Sprintf("conformance-%d.example.com", n)
	case "ipv4":
		s = fmt.Sprintf("192.0.2.%d", n%256)
	case "ipv6":
		s = fmt.Sprintf("2001:db8::%x", n)
	default:
		s = fmt.Sprintf("conformance-%d", n)
	}
	if len(f.Patterns) > 0 && !f.Accepts(JSONString(s)) {
		if p, ok := sampleRegexp(f.Patterns[0], n%4); ok {
			s = p
		}
	}
	if c := int64(utf8.RuneCountInString(s)); c < f.MinLength {
		s += strings.Repeat("x", int(f.MinLength-c))
	}
	if f.MaxLength >= 0 && int64(utf8.RuneCountInString(s)) > f.MaxLength {
		s = string([]rune(s)[:f.MaxLength])
	}
	return s
}

// sampleRegexp returns a string matching pattern, built from its syntax
// tree: each repetition taken extra times past its minimum, the extra-th
// alternative, a printable character of each class.
func sampleRegexp(pattern string, extra int) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(r *syntax.Regexp)
	repeat := func(r *syntax.Regexp, n int) {
		for range n {
			walk(r)
		}
	}
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			b.WriteRune(classRune(r.Rune, extra))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpCapture:
			walk(r.Sub[0])
		case syntax.OpStar:
			repeat(r.Sub[0], extra)
		case syntax.OpPlus:
			repeat(r.Sub[0], 1+extra)
		case syntax.OpQuest:
			repeat(r.Sub[0], min(extra, 1))
		case syntax.OpRepeat:
			n := r.Min + extra
			if r.Max >= 0 {
				n = min(n, r.Max)
			}
			repeat(r.Sub[0], n)
		case syntax.OpConcat:
			for _, s := range r.Sub {
				walk(s)
			}
		case syntax.OpAlternate:
			walk(r.Sub[extra%len(r.Sub)])
		}
	}
	walk(re)
	s := b.String()
	ok, err := regexp.MatchString(pattern, s)
	return s, err == nil && ok
}

// classRune picks a printable character of a character class (pairs of
// ranges), preferring letters and digits.
func classRune(ranges []rune, n int) rune {
	var fallback rune = -1
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, want := range [][2]rune{{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'!', '~'}} {
			l, h := max(lo, want[0]), min(hi, want[1])
			if l <= h {
				return l + rune(n)%(h-l+1)
			}
		}
		if fallback < 0 {
			fallback = lo
		}
	}
	if fallback < 0 {
		return 'x'
	}
	return fallback
}

// SpecialInts are the numbers bugs gather at: powers of two and their
// neighbours (2^31 and 2^53 among them), and the ends of int64.
var SpecialInts = func() []*big.Int {
	var out []*big.Int
	add := func(v *big.Int) {
		for _, d := range []int64{-1, 0, 1} {
			out = append(out, new(big.Int).Add(v, big.NewInt(d)))
		}
	}
	for k := uint(1); k <= 64; k++ {
		add(new(big.Int).Lsh(big.NewInt(1), k))
	}
	for _, v := range []int64{0, 10, 100, 1000} {
		add(big.NewInt(v))
	}
	return out
}()

// Specials lists the grid's steps where bugs gather: its ends and the
// ones next to them, and those whose value is one of SpecialInts.
func (g Grid) Specials() []*big.Int {
	var out []*big.Int
	add := func(k *big.Int) {
		if k.Cmp(g.Lo) >= 0 && k.Cmp(g.Hi) <= 0 && !slices.ContainsFunc(out, func(o *big.Int) bool { return o.Cmp(k) == 0 }) {
			out = append(out, k)
		}
	}
	one := big.NewInt(1)
	for _, k := range []*big.Int{g.Lo, g.Hi, new(big.Int).Add(g.Lo, one), new(big.Int).Sub(g.Hi, one)} {
		add(k)
	}
	for _, v := range SpecialInts {
		if q := new(big.Rat).Quo(new(big.Rat).SetInt(v), g.Step); q.IsInt() {
			add(q.Num())
		}
	}
	return out
}

// JSONString renders s as a JSON string.
func JSONString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// sameJSON reports whether two JSON values are equal, numbers by value.
func sameJSON(a, b json.RawMessage) bool {
	va, errA := DecodeJSON(a)
	vb, errB := DecodeJSON(b)
	if errA != nil || errB != nil {
		return string(a) == string(b)
	}
	return SameJSON(va, vb)
}

// A Probe is a value for a field, with what it is in words naming the field.
type Probe struct {
	Value json.RawMessage
	What  string
}

// Invalid lists values the field's schema forbids: of another type, null
// where it is not nullable, just outside a minimum or maximum (or, for an
// integer, the format's range), off the multipleOf, shorter or longer
// than its lengths, not matching its pattern. A value outside the bounds
// that the field's compiled schema would accept is left out: it would not
// be invalid.
func (f *Field) Invalid() []Probe {
	var ps []Probe
	add := func(what, raw string) {
		ps = append(ps, Probe{json.RawMessage(raw), f.Name + " " + what})
	}
	switch f.Type {
	case "integer":
		add("as a string", `"5"`)
		add("fractional", `5.5`)
		add("a boolean", `true`)
	case "number":
		add("as a string", `"5"`)
		add("a boolean", `true`)
	case "string":
		add("a number", `5`)
		if len(f.Enum) > 0 {
			add("not in the enum", `"conformance-not-in-enum"`)
		}
	case "boolean":
		add("as a string", `"true"`)
	}
	if !f.Nullable && f.Type != "" {
		add("null", `null`)
	}
	past := func(raw json.RawMessage, what string) {
		if f.Schema == nil || !f.Accepts(raw) {
			ps = append(ps, Probe{raw, f.Name + " " + what})
		}
	}
	switch f.Type {
	case "integer":
		if lo := f.Lowest(); lo != nil {
			v := new(big.Int).Sub(lo, big.NewInt(1))
			past(json.RawMessage(v.String()), fmt.Sprintf("%s (below the lowest, %s)", v, lo))
		}
		if hi := f.Highest(); hi != nil {
			v := new(big.Int).Add(hi, big.NewInt(1))
			past(json.RawMessage(v.String()), fmt.Sprintf("%s (above the highest, %s)", v, hi))
		}
	case "number":
		for _, end := range []struct {
			b     *Bound
			by    int64
			where string
		}{{f.Min, -1, "below the lowest"}, {f.Max, 1, "above the highest"}} {
			if b := end.b; b != nil {
				v := b.Value
				if !b.Exclusive {
					v = new(big.Rat).Add(v, big.NewRat(end.by, 1))
				}
				past(NumberJSON(v), fmt.Sprintf("%s (%s, %s%s)", NumberJSON(v), end.where, map[bool]string{true: "exclusive, "}[b.Exclusive], NumberJSON(b.Value)))
			}
		}
	case "string":
		if f.MinLength > 0 {
			past(JSONString(strings.Repeat("x", int(f.MinLength-1))), fmt.Sprintf("shorter than %d characters (minLength)", f.MinLength))
		}
		if f.MaxLength >= 0 {
			past(JSONString(strings.Repeat("x", int(f.MaxLength+1))), fmt.Sprintf("longer than %d characters (maxLength)", f.MaxLength))
		}
		if len(f.Patterns) > 0 {
			past(JSONString("conformance not matching ~"), "not matching its pattern")
		}
	}
	if g, ok := f.Grid(true); ok && f.MultipleOf != nil && g.Lo.Cmp(g.Hi) < 0 {
		// Between the two lowest values allowed: off the multipleOf.
		var v *big.Rat
		switch {
		case f.Type == "number":
			v = new(big.Rat).Add(g.Value(g.Lo), new(big.Rat).Quo(g.Step, big.NewRat(2, 1)))
		case g.Step.Cmp(big.NewRat(1, 1)) > 0:
			v = new(big.Rat).Add(g.Value(g.Lo), big.NewRat(1, 1))
		}
		if v != nil {
			past(NumberJSON(v), fmt.Sprintf("%s (not a multiple of %s)", NumberJSON(v), NumberJSON(f.MultipleOf)))
		}
	}
	return ps
}

// Ends lists the valid extremes of what the schema states for a numeric
// field: the minimum and maximum, or where a bound is exclusive or off the
// multipleOf, the nearest value inside it. A format's range alone is not
// one.
func (f *Field) Ends() []Probe {
	if f.Min == nil && f.Max == nil {
		return nil
	}
	g, ok := f.Grid(true)
	if !ok {
		return nil
	}
	var ps []Probe
	for _, end := range []struct {
		stated *Bound
		k      *big.Int
		which  string
	}{{f.Min, g.Lo, "lowest"}, {f.Max, g.Hi, "highest"}} {
		if end.stated == nil {
			continue
		}
		v := g.Value(end.k)
		what := fmt.Sprintf("%s %s (the %s value the schema allows)", f.Name, NumberJSON(v), end.which)
		if v.Cmp(end.stated.Value) == 0 {
			what = fmt.Sprintf("%s %s (a bound the schema states)", f.Name, NumberJSON(v))
		}
		ps = append(ps, Probe{NumberJSON(v), what})
	}
	return ps
}
