package reporttest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records the failures reported to it.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// TestReadersFail: each reader fails on what it is there to find, and
// passes what is well formed.
func TestReadersFail(t *testing.T) {
	tests := []struct {
		name string
		read func(tb testing.TB)
		want string // in the failure; "" for none
	}{
		{"markdown well formed", func(tb testing.TB) {
			ReadMarkdown(tb, []byte("### a\n\n| a | b |\n|---|---|\n| 1 \\| 2 | 3 |\n\n````\n```\n<script>\n````\n"), "k-secret")
		}, ""},
		{"markdown table broken", func(tb testing.TB) { ReadMarkdown(tb, []byte("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n")) }, "cells"},
		{"markdown fence not closed", func(tb testing.TB) { ReadMarkdown(tb, []byte("```\nx\n")) }, "does not close"},
		{"markdown raw html", func(tb testing.TB) { ReadMarkdown(tb, []byte("a <script>x</script>\n")) }, "raw HTML"},
		{"markdown forged heading", func(tb testing.TB) { ReadMarkdown(tb, []byte("#forged\n")) }, "no heading"},
		{"markdown secret", func(tb testing.TB) { ReadMarkdown(tb, []byte("k-secret\n"), "k-secret") }, "secret"},
		{"html script", func(tb testing.TB) {
			ReadHTML(tb, []byte(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'"><script>x</script>`))
		}, "<script>"},
		{"html link out", func(tb testing.TB) {
			ReadHTML(tb, []byte(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'"><a href="https://x.test">x</a>`))
		}, "links out"},
		{"html no policy", func(tb testing.TB) { ReadHTML(tb, []byte(`<p>x`)) }, "Content-Security-Policy"},
		{"html style not allowed", func(tb testing.TB) {
			ReadHTML(tb, []byte(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'"><style>p{}</style>`))
		}, "style sheet"},
		{"html event", func(tb testing.TB) {
			ReadHTML(tb, []byte(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'"><p onclick="x">`))
		}, "onclick"},
		{"annotation well formed", func(tb testing.TB) {
			as := ReadAnnotations(tb, []byte("text\n::error title=a%3Ab%2Cc::50%25%0Anext\n"))
			if len(as) != 1 || as[0].Title != "a:b,c" || as[0].Message != "50%\nnext" {
				tb.Errorf("read %+v", as)
			}
		}, ""},
		{"annotation property not escaped", func(tb testing.TB) { ReadAnnotations(tb, []byte("::error title=a,b::m\n")) }, "not escaped"},
		{"annotation malformed", func(tb testing.TB) { ReadAnnotations(tb, []byte("::error::m\n")) }, "no annotation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			tt.read(r)
			got := strings.Join(r.failures, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("failures %q; want one with %q", got, tt.want)
			}
		})
	}
}
