package spec_test

import (
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

func TestMembers(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     string // name=raw pairs, joined by " "
		err      bool
	}{
		{name: "plain", in: `{"petId":1,"quantity":5,"status":"available"}`, want: `petId=1 quantity=5 status="available"`},
		{name: "escaped names are unquoted", in: `{"pet\u0049d":1,"qu\"ote":2}`, want: `petId=1 qu"ote=2`},
		{name: "values stay raw", in: `{"a":{"b":[1, 2]},"c":1.0e0}`, want: `a={"b":[1, 2]} c=1.0e0`},
		{name: "empty", in: `{}`, want: ``},
		{name: "not an object", in: `[1]`, err: true},
		{name: "cut", in: `{"a":1,"b"`, err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := spec.Members([]byte(tt.in), func(name, raw []byte) bool {
				got = append(got, string(name)+"="+string(raw))
				return true
			})
			if (err != nil) != tt.err {
				t.Fatalf("Members(%s) error = %v; want error: %v", tt.in, err, tt.err)
			}
			if !tt.err && strings.Join(got, " ") != tt.want {
				t.Errorf("Members(%s) = %q; want %q", tt.in, strings.Join(got, " "), tt.want)
			}
		})
	}
}
