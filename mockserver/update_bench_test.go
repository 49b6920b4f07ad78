package mockserver

import (
	"testing"
)

// plainBodies are update bodies for the fast path and its checks: some it
// takes, some it leaves to the JSON decoder.
var plainBodies = []string{
	`{"quantity":12}`, `{"quantity": 0}`, ` { "quantity" : 2147483647 } `, "{\"quantity\":\t7\n}\r\n",
	`{"quantity":2147483648}`, `{"quantity":-1}`, `{"quantity":012}`, `{"quantity":00}`, `{"quantity":5.0}`,
	`{"quantity":1e2}`, `{"quantity":1,"quantity":2}`, `{"quantity":1} x`, `{"quantity":1}}`, `{"quantity":}`,
	`{"quantity":"5"}`, `{"quantity":99999999999}`, `{"Quantity":1}`, `{"quantity":1,"status":"sold"}`, `{}`, ``,
}

// TestPlainUpdateAgrees checks that the fast path never reads a body other
// than the JSON decoder does.
func TestPlainUpdateAgrees(t *testing.T) {
	for _, b := range plainBodies {
		checkPlainUpdate(t, []byte(b))
	}
}

func FuzzPlainUpdate(f *testing.F) {
	for _, b := range plainBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkPlainUpdate(t, b) })
}

func checkPlainUpdate(t *testing.T, b []byte) {
	t.Helper()
	q, ok := plainUpdate(b)
	if !ok {
		return
	}
	if want, problem := decodeInventoryUpdate(b); problem != "" || want != q {
		t.Errorf("plainUpdate(%q) = %d; the decoder reads %d, %q", b, q, want, problem)
	}
}

func BenchmarkParseInventoryUpdate(b *testing.B) {
	for _, tt := range []struct{ name, body string }{
		{"plain", `{"quantity":12}`},
		{"decoder", `{"quantity":12,"note":"x"}`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			body := []byte(tt.body)
			b.ReportAllocs()
			for b.Loop() {
				if _, problem := parseInventoryUpdate(body); problem != "" {
					b.Fatal(problem)
				}
			}
		})
	}
}
