package mockserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// fullDisk is a store on a full disk: reads serve, writes fail as the
// file engine's do, naming the file.
type fullDisk struct{ store.Store }

const fullDiskPath = "/srv/team-secrets/inventory/state.db"

func (fullDisk) Update(context.Context, string, int64, func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	return fixtures.Record{}, fmt.Errorf("%w: file store %s: a write failed (write %s: no space left on device); writes are refused until the mock restarts", store.ErrUnavailable, fullDiskPath, fullDiskPath)
}

func (fullDisk) Reset(context.Context, string) error {
	return fmt.Errorf("%w: file store %s: closed", store.ErrUnavailable, fullDiskPath)
}

// TestStoreErrorHidesItsPath checks the 503 of a store that cannot write:
// the Error body says that the store cannot write, never the server's file
// path, which the log has instead, once however many requests fail.
func TestStoreErrorHidesItsPath(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.Store = fullDisk{store.NewMemory(testRecords(t), store.Options{})}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	for _, tt := range []struct {
		r    req
		want string
	}{
		{req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 5}`}, "the mock's store cannot write now"},
		{req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 6}`}, "the mock's store cannot write now"},
		{req{method: "POST", path: "/__admin/reset"}, "the mock's store cannot write now"},
	} {
		got := serve(t, s, tt.r)
		if got.status != http.StatusServiceUnavailable || got.Code != httpapi.CodeUnavailable || !strings.Contains(got.Message.(string), tt.want) {
			t.Errorf("%s %s = %d %s; want 503 unavailable saying %q", tt.r.method, tt.r.path, got.status, got.body, tt.want)
		}
		if strings.Contains(string(got.body), "team-secrets") {
			t.Errorf("%s %s: the answer shows the server's path: %s", tt.r.method, tt.r.path, got.body)
		}
	}
	if n := strings.Count(logs.String(), "the store cannot serve"); n != 1 || !strings.Contains(logs.String(), fullDiskPath) {
		t.Errorf("the log has %d store lines; want one, with the path:\n%s", n, &logs)
	}
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory"}); got.status != http.StatusOK {
		t.Errorf("list = %d; want 200: reads still serve", got.status)
	}
}
