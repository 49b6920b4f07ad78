package spec

import (
	"os"
	"testing"
)

// quickSchemas are the schemas of testdata/quick.yaml, compiled as the
// contract's are.
func quickSchemas(t testing.TB) []*Schema {
	t.Helper()
	doc, err := os.ReadFile("testdata/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Schema
	for _, name := range []string{"Plain", "Bounded", "Wide", "Item", "Closed", "Error"} {
		s := c.Schema(name)
		if s == nil {
			t.Fatalf("no schema %s", name)
		}
		out = append(out, s)
	}
	return out
}

// quickAccepts reports whether s's quick check decides that v keeps the
// rules.
func quickAccepts(s *Schema, v any) bool {
	ps, ok := s.quick.decide(v)
	return ok && ps == nil
}

// TestQuickIsTaken pins that the contract's bodies are decided by their
// quick check, not by the validator: a quick check that declined
// everything would pass every other test.
func TestQuickIsTaken(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	for name, valid := range map[string]string{
		"InventoryUpdate": `{"quantity": 7}`,
		"InventoryItem":   `{"petId": 3, "quantity": 7, "status": "sold"}`,
		"Error":           `{"code": "not_found", "message": "no such pet", "status": 404}`,
	} {
		s := c.Schema(name)
		if s == nil || s.quick == nil {
			t.Errorf("%s: no quick check", name)
			continue
		}
		v, err := DecodeJSON([]byte(valid))
		if err != nil {
			t.Fatal(err)
		}
		if !quickAccepts(s, v) {
			t.Errorf("%s: the quick check declines %s", name, valid)
		}
	}
	for _, s := range quickSchemas(t) {
		if s.quick == nil {
			t.Errorf("%s: no quick check", s.Name)
		}
	}
}

// TestQuickDeclines pins values the quick check leaves to the validator,
// whatever the validator then says.
func TestQuickDeclines(t *testing.T) {
	schemas := quickSchemas(t)
	for _, tc := range []struct {
		schema int
		body   string
	}{
		{0, `{"quantity": 1.0}`},     // an integer to JSON Schema, not to a quick check
		{0, `{"quantity": 1e2}`},     // the same
		{0, `{"quantity": "1"}`},     // a string
		{0, `{"quantity": null}`},    // null
		{0, `{}`},                    // required
		{0, `[]`},                    // not an object
		{1, `{"quantity": 1001}`},    // above the maximum
		{1, `{"quantity": -1}`},      // below the minimum
		{2, `{"count": 2147483648}`}, // past int32
		{2, `{"quantity": 9223372036854775808}`},
		{3, `{"petId": 1, "quantity": 2, "status": "lost"}`},
		{4, `{"level": 4}`},
		{4, `{"level": 1, "other": true}`},
		{4, `{"level": 1, "flag": "yes"}`},
	} {
		v, err := DecodeJSON([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if s := schemas[tc.schema]; quickAccepts(s, v) {
			t.Errorf("%s: the quick check accepts %s", s.Name, tc.body)
		}
	}
}

// quickBodies seed the fuzz targets: bodies each schema of quickSchemas
// accepts, refuses for one reason, or leaves to the validator.
var quickBodies = []string{
	`{"quantity": 7}`, `{"quantity": 1000}`, `{"quantity": 1001}`, `{"quantity": -1}`, `{"quantity": 0}`,
	`{"quantity": -0}`, `{"quantity": 2147483647}`, `{"quantity": 2147483648}`, `{"quantity": 9223372036854775807}`,
	`{"quantity": 1.0}`, `{"quantity": "7"}`, `{"quantity": null}`, `{"quantity": 7, "extra": 1}`, `{}`, `[]`, `7`,
	`{"quantity": true}`, `{"quantity": [1]}`, `{"quantity": {"n": 1}}`, `{"quantity": "many", "extra": "x"}`,
	`{"petId": 3, "quantity": 7, "status": "sold"}`, `{"petId": 3, "quantity": 7, "status": "Sold"}`,
	`{"petId": "3", "quantity": 7, "status": "sold"}`, `{"petId": 3, "quantity": "7", "status": 1}`,
	`{"level": 2, "flag": true, "name": "x"}`, `{"level": 2, "flag": 1}`, `{"level": 2, "flag": "yes"}`,
	`{"count": -2147483648, "quantity": -100}`, `{"1": "x"}`, `{"a~b": 1}`,
	`{"code": "x", "message": "y", "status": 400}`, `{"code": 1, "message": "y", "status": 400}`,
}

// TestQuickRefuses pins the bodies the quick check refuses itself, and
// the words it uses, which are the validator's.
func TestQuickRefuses(t *testing.T) {
	schemas := quickSchemas(t)
	for _, tc := range []struct {
		schema     int
		body, want string
	}{
		{0, `{"quantity": "many"}`, "quantity: got string, want integer"},
		{0, `{"quantity": null}`, "quantity: got null, want integer"},
		{0, `{"quantity": [1]}`, "quantity: got array, want integer"},
		{4, `{"level": 1, "flag": "yes"}`, "flag: got string, want boolean"},
		{5, `{"code": true, "message": "y", "status": 400}`, "code: got boolean, want string"},
	} {
		v, err := DecodeJSON([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		s := schemas[tc.schema]
		ps, ok := s.quick.decide(v)
		if !ok || Join(ps) != tc.want {
			t.Errorf("%s: quick check of %s = %q (decided %v); want %q", s.Name, tc.body, Join(ps), ok, tc.want)
		}
		if got := Join(s.validate(v)); got != tc.want {
			t.Errorf("%s: the validator says %q of %s; the quick check's words %q are not its own", s.Name, got, tc.body, tc.want)
		}
	}
}

// FuzzQuickDecides checks that whatever a quick check decides, the JSON
// Schema validator decides the same: what it accepts, the validator
// accepts, and what it refuses, the validator refuses with the same
// problems, word for word. It may leave anything to the validator.
func FuzzQuickDecides(f *testing.F) {
	for _, body := range quickBodies {
		for i := range 6 {
			f.Add(uint8(i), []byte(body))
		}
	}
	schemas := quickSchemas(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		v, err := DecodeJSON(body)
		if err != nil {
			return
		}
		s := schemas[int(which)%len(schemas)]
		ps, ok := s.quick.decide(v)
		if !ok {
			return
		}
		if got, want := Join(s.validate(v)), Join(ps); got != want {
			t.Fatalf("%s: the quick check says %q of %s; the validator says %q", s.Name, want, body, got)
		}
	})
}
