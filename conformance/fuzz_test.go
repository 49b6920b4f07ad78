package conformance

import (
	"context"
	"errors"
	"github.com/petstore/inventory-kit/spec/exchange"

	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzRetryAfter: any Retry-After value gives a wait within bounds.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "5", "-1", "3600", "99999999999999999999", "1.5", " 2 ", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "\x00"} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := retryAfter(v, now)
		if d < 100*time.Millisecond || d > maxOneWait {
			t.Errorf("retryAfter(%q) = %s; want 100ms..%s", v, d, maxOneWait)
		}
	})
}

// FuzzContentType: any Content-Type the target sends is read without a
// panic and shown quoted, on one line, without control characters.
func FuzzContentType(f *testing.F) {
	for _, s := range []string{"application/json", "application/json; charset=utf-8", `application/json; key="x"`, "", ";;;", "text/plain\x1b[2J", "a/b; c=\"\n\"", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		x := &Exchange{Exchange: exchange.Exchange{Status: 200, RespHeader: http.Header{"Content-Type": {ct}}}}
		_ = x.MediaType()
		for _, s := range []string{exchange.Quote(ct), x.Got()} {
			first, _, _ := strings.Cut(s, "\n")
			if strings.ContainsFunc(first, func(r rune) bool { return unicode.IsControl(r) }) {
				t.Errorf("control character shown: %q", first)
			}
		}
	})
}

// FuzzTargetJSON: any list body a target sends is decoded, indexed,
// compared and rendered without a panic, and rendered without control
// characters.
func FuzzTargetJSON(f *testing.F) {
	for _, s := range []string{`[]`, `[{"petId":1,"quantity":5,"status":"sold"}]`, `[{"petId":1},{"petId":1}]`, `[null]`, `{}`, `[{"petId":"1"}]`,
		`[{"petId":9223372036854775808}]`, `[{"petId":1,"\u001b[2J\n":1}]`, `[{"petId":1.0,"q":5.0,"n":{"a":[1,2]}}]`, `[`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ix, err := DecodeList(context.Background(), body, "petId")
		if err != nil {
			if !errors.Is(err, ErrNotList) {
				t.Errorf("error %v is no ErrNotList", err)
			}
			return
		}
		for _, id := range ix.Order {
			r := ix.ByID[id]
			if r.ID != id || !r.Equal(r) {
				t.Errorf("record %d indexed as %d, or not equal to itself", id, r.ID)
			}
			for _, s := range []string{r.String(), strings.Join(r.Diff(Record{}), ","), strings.Join(r.Diff(Record{JSON: []byte(`{}`)}), ",")} {
				if strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
					t.Errorf("control character rendered: %q", s)
				}
			}
		}
		if len(ix.Bad) > maxExamples || len(ix.Bad) > ix.BadCount {
			t.Errorf("%d examples of %d bad records", len(ix.Bad), ix.BadCount)
		}
	})
}
