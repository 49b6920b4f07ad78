package conformance

import (
	"context"
	"strings"
	"testing"
)

// TestDecodeRecordsContext reads lists as decodeRecords does, and stops
// when its context ends.
func TestDecodeRecordsContext(t *testing.T) {
	tests := []struct {
		body string
		n    int
		err  string
	}{
		{`[]`, 0, ""},
		{`null`, 0, ""},
		{` [{"petId":1},{"petId":2}] `, 2, ""},
		{`[{"petId":1},null]`, 0, "item 1 is null"},
		{`[{"petId":1}][]`, 0, "data after the array"},
		{`[1]`, 0, "not a JSON array of objects"},
		{`{"petId":1}`, 0, "not a JSON array of objects"},
		{`[{"petId":1}`, 0, "not a JSON array of objects"},
		{``, 0, "not a JSON array of objects"},
	}
	for _, tt := range tests {
		rs, err := DecodeRecordsContext(context.Background(), []byte(tt.body))
		if len(rs) != tt.n || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("DecodeRecordsContext(%q) = %d records, %v; want %d, %q", tt.body, len(rs), err, tt.n, tt.err)
		}
		if old, oldErr := decodeRecords([]byte(tt.body)); (oldErr == nil) != (err == nil) || len(old) != len(rs) {
			t.Errorf("%q: decodeRecords gives %d, %v; DecodeRecordsContext %d, %v", tt.body, len(old), oldErr, len(rs), err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DecodeRecordsContext(ctx, []byte(`[{"petId":1}]`)); err != context.Canceled {
		t.Errorf("an ended context: %v; want context.Canceled", err)
	}
}
