package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// slogLine is what slog's own handler writes for l.
func slogLine(t testing.TB, l *accessLine, json bool) string {
	t.Helper()
	var buf bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&buf, nil)
	if json {
		h = slog.NewJSONHandler(&buf, nil)
	}
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(l.attrs()...)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// FuzzAccessLine checks that the access log's own formatting writes, for
// every line it takes, exactly what slog's handler writes, in both
// formats; and that a line it declines is written by slog, whole.
func FuzzAccessLine(f *testing.F) {
	f.Add("GET", "/v1/inventory", 200, 2345, int64(1234567), "", "", "", "", "a1b2c3d4-1", int64(1764000000123456789))
	f.Add("PATCH", "/v1/inventory/3", 400, 98, int64(52000), "invalid_body", "checkout-e2e-42", "", "", "req-7", int64(1764000000999999999))
	f.Add("GET", "/v1/inventory", 404, 70, int64(3), "not_found", "", "code=404", "reset", "x", int64(0))
	f.Add("GET", "/v1/a b", 404, 70, int64(3), "", "", "", "", "x", int64(1))
	f.Add("GET", "/v1/\"q\"=\\", 404, 70, int64(-5), "", "", "", "", "x", int64(1))
	f.Add("GET", "/v1/\u00e9\u2028\x00", 0, 0, int64(3e12), "", "", "delay=10", "latency 5ms", "", int64(1))
	f.Fuzz(func(t *testing.T, method, path string, status, size int, d int64, code, session, prefer, chaos, id string, unixNano int64) {
		l := &accessLine{
			end: time.Unix(0, unixNano), method: method, path: path, status: status, bytes: size,
			duration: time.Duration(d), code: code, session: session, prefer: prefer, chaos: chaos, requestID: id,
		}
		if y := l.end.Year(); y < 0 || y >= 10000 {
			t.Skip("slog's JSON handler refuses years outside 0..9999; the mock logs the clock's time")
		}
		for _, json := range []bool{false, true} {
			want := slogLine(t, l, json)
			got, plain := l.append(nil, json)
			if plain && string(got) != want {
				t.Fatalf("json=%v:\n got %q\nwant %q", json, got, want)
			}
			// Through NewLogger's handler, whatever the values: slog's line.
			var buf bytes.Buffer
			l.write(context.Background(), NewLogger(&buf, json).Handler())
			if buf.String() != want {
				t.Fatalf("json=%v, through NewLogger:\n got %q\nwant %q", json, buf.String(), want)
			}
		}
	})
}

// TestAccessLineTakesTheUsualLines pins that the usual lines, the ones
// the fast formatting exists for, are formatted by it, not by slog.
func TestAccessLineTakesTheUsualLines(t *testing.T) {
	end := time.Date(2026, 11, 24, 21, 35, 0, 123456789, time.UTC)
	for _, l := range []accessLine{
		{end: end, method: "GET", path: "/v1/inventory", status: 200, bytes: 2345, duration: 1234567, requestID: "a1b2c3d4-1"},
		{end: end, method: "PATCH", path: "/v1/inventory/3", status: 400, bytes: 98, duration: 52000, code: "invalid_body", session: "checkout-e2e-42", requestID: "a1b2c3d4-2"},
		{end: end, method: "GET", path: "/v1/inventory", status: 401, bytes: 70, duration: 900, code: "unauthorized", requestID: "a1b2c3d4-3"},
	} {
		for _, json := range []bool{false, true} {
			got, plain := l.append(nil, json)
			if !plain {
				t.Errorf("%s %s (json=%v): declined; want formatted by the access log", l.method, l.path, json)
			}
			if want := slogLine(t, &l, json); string(got) != want {
				t.Errorf("got %q\nwant %q", got, want)
			}
		}
	}
	got, _ := (&accessLine{end: end, method: "GET", path: "/v1/inventory", status: 200, requestID: "r"}).append(nil, false)
	if want := "time=2026-11-24T21:35:00.123Z level=INFO msg=request method=GET path=/v1/inventory status=200 bytes=0 duration=0s request_id=r\n"; string(got) != want {
		t.Errorf("text line = %q; want %q", got, want)
	}
	if !strings.HasPrefix(slogLine(t, &accessLine{end: end, method: "GET", path: "/a b", requestID: "r"}, false), "time=") {
		t.Error("slog's line has no time")
	}
}

func BenchmarkAccessLine(b *testing.B) {
	l := &accessLine{end: time.Now(), method: "GET", path: "/v1/inventory", status: 200, bytes: 2345, duration: 1234567, requestID: "a1b2c3d4-1"}
	for _, json := range []bool{false, true} {
		name := "text"
		if json {
			name = "json"
		}
		b.Run(name+"/slog", func(b *testing.B) {
			var h slog.Handler = slog.NewTextHandler(nullWriter{}, nil)
			if json {
				h = slog.NewJSONHandler(nullWriter{}, nil)
			}
			b.ReportAllocs()
			for b.Loop() {
				l.write(context.Background(), h)
			}
		})
		b.Run(name+"/own", func(b *testing.B) {
			h := NewLogger(nullWriter{}, json).Handler()
			b.ReportAllocs()
			for b.Loop() {
				l.write(context.Background(), h)
			}
		})
	}
}

type nullWriter struct{}

func (nullWriter) Write(p []byte) (int, error) { return len(p), nil }
