package store

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRedisLog checks what becomes of go-redis's own log lines: JSON lines
// of the mock's logger, the password replaced, at most one per period,
// the next one saying how many were left out.
func TestRedisLog(t *testing.T) {
	var out bytes.Buffer
	l := &redisLog{every: 200 * time.Millisecond}
	l.use(slog.New(slog.NewJSONHandler(&out, nil)), "hunter2-pw")
	ctx := context.Background()
	for range 5 {
		l.Printf(ctx, "redis: connection pool: failed to dial after %d attempts: %v", 1, "dial redis://:hunter2-pw@cache:6379: refused")
	}
	time.Sleep(250 * time.Millisecond)
	l.Printf(ctx, "redis: %s", "again")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 6 calls, 5 of them within 200ms; want 2:\n%s", len(lines), out.String())
	}
	var first, second map[string]any
	for i, v := range []*map[string]any{&first, &second} {
		if err := json.Unmarshal([]byte(lines[i]), v); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, lines[i])
		}
	}
	if first["level"] != "WARN" || first["msg"] != "redis client" || !strings.Contains(first["detail"].(string), "failed to dial after 1 attempts") {
		t.Errorf("first line = %v; want WARN 'redis client' with go-redis's text as detail", first)
	}
	if second["left_out"] != 4.0 || second["detail"] != "redis: again" {
		t.Errorf("second line = %v; want detail 'redis: again' and left_out 4", second)
	}
	if strings.Contains(out.String(), "hunter2-pw") {
		t.Errorf("the log shows the password:\n%s", out.String())
	}
}
