package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"

	. "github.com/onsi/ginkgo/v2"
)

var (
	pendingMu sync.Mutex         // guards pending
	pending   = map[int64]Item{} // pets written to and not yet restored, with their original record
)

// protect records the pet's original record before a spec writes to it and
// restores the quantity when the spec ends, pass or fail. It returns the
// original record.
func protect(ctx context.Context, petID int64) Item {
	GinkgoHelper()
	t := target()
	items, x := listItems(ctx)
	orig, ok := findItem(items, petID)
	if !ok {
		Fail(x.Want("petId %d to be listed before the check writes to it", petID))
	}
	pendingMu.Lock()
	if _, dup := pending[petID]; !dup {
		pending[petID] = orig
	}
	pendingMu.Unlock()
	DeferCleanup(func() {
		if err := t.restore(petID); err != nil {
			AddReportEntry(EntryRestoreFailed, err.Error(), ReportEntryVisibilityAlways)
			Fail("the check changed data it could not restore: " + err.Error())
		}
	})
	return orig
}

// restore sets the pet back to its recorded quantity and checks that the
// list shows it. A failure is printed to stderr at once, since the run may
// not get as far as a report.
func (t *Target) restore(petID int64) error {
	pendingMu.Lock()
	orig, ok := pending[petID]
	pendingMu.Unlock()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*t.cfg.Timeout)
	defer cancel()
	err := t.putBack(ctx, orig)
	if err != nil {
		err = fmt.Errorf("petId %d: could not restore quantity %d: %v", orig.PetID, orig.Quantity, err)
		fmt.Fprintf(os.Stderr, "\n!!! RESTORE FAILED: %v\n", err)
		return err
	}
	pendingMu.Lock()
	delete(pending, petID)
	pendingMu.Unlock()
	return nil
}

// putBack sets the pet's quantity to orig's and checks the list shows it.
func (t *Target) putBack(ctx context.Context, orig Item) error {
	x := t.send(ctx, Request{Method: http.MethodPatch, Path: petPath(orig.PetID), Body: quantityBody(orig.Quantity)})
	if x.Err != nil {
		return x.Err
	}
	if x.Status != http.StatusOK {
		return fmt.Errorf("PATCH answered %d", x.Status)
	}
	x = t.send(ctx, Request{Method: http.MethodGet, Path: "/inventory"})
	var items []Item
	if x.Err != nil || json.Unmarshal(x.RespBody, &items) != nil {
		return fmt.Errorf("the list after the restore could not be read")
	}
	if it, ok := findItem(items, orig.PetID); !ok || it.Quantity != orig.Quantity {
		return fmt.Errorf("the list after the restore shows %+v", it)
	}
	return nil
}

// RestoreAll restores every pet a spec wrote to and did not restore yet, as
// after an interrupt. It returns one message per pet it could not restore.
func RestoreAll() []string {
	if current == nil {
		return nil
	}
	pendingMu.Lock()
	ids := make([]int64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	pendingMu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var failed []string
	for _, id := range ids {
		if err := current.restore(id); err != nil {
			failed = append(failed, err.Error())
		}
	}
	return failed
}

// petPath is the update path of a pet.
func petPath(id int64) string { return "/inventory/" + strconv.FormatInt(id, 10) }

// quantityBody is an InventoryUpdate setting quantity q.
func quantityBody(q int64) []byte { return []byte(`{"quantity":` + strconv.FormatInt(q, 10) + `}`) }
