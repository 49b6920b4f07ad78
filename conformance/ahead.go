package conformance

import (
	"context"
	"strconv"
	"sync"

	"github.com/onsi/ginkgo/v2/types"
)

// ahead holds the requests of the read-only checks, sent before the checks
// run, Config.Workers at a time, and their answers: Ginkgo runs checks one
// after the other, so against a target far away their waits would add up.
// Each check still judges its own answer, taken from here once.
type ahead struct {
	mu     sync.Mutex // guards reqs and got
	reqs   []Request
	got    map[string][]*Exchange // by aheadKey, in the order sent
	filter types.LabelFilter      // the run's --label-filter; nil: every check
}

// aheadKey identifies a request as a check sends it.
func aheadKey(r Request) string {
	return r.Method + "\x00" + r.Path + "\x00" + r.Auth + "\x00" + r.ContentType + "\x00" + strconv.FormatInt(r.MaxBytes, 10) + "\x00" + strconv.FormatBool(r.Body != nil) + string(r.Body)
}

// Ahead registers r, the first request of a check with these labels that
// only reads (or sends what a conforming target refuses), to be sent
// before the checks run, unless --label-filter leaves the check out; it
// returns r. Call it while registering checks; a mutating check must not.
func (c *Client) Ahead(labels []string, r Request) Request {
	c.ahead.mu.Lock()
	defer c.ahead.mu.Unlock()
	if c.ahead.filter == nil || c.ahead.filter(labels) {
		c.ahead.reqs = append(c.ahead.reqs, r)
	}
	return r
}

// sendAhead sends the registered requests, Config.Workers at a time.
func (c *Client) sendAhead(ctx context.Context) {
	c.ahead.mu.Lock()
	reqs := c.ahead.reqs
	c.ahead.reqs = nil
	c.ahead.got = map[string][]*Exchange{}
	c.ahead.mu.Unlock()
	xs := make([]*Exchange, len(reqs))
	sem := make(chan struct{}, c.cfg.Workers)
	var wg sync.WaitGroup
	for i, r := range reqs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.ahead = true // traced when a check takes it
			xs[i] = c.send(ctx, r)
		})
	}
	wg.Wait()
	c.ahead.mu.Lock()
	defer c.ahead.mu.Unlock()
	for i, r := range reqs {
		k := aheadKey(r)
		c.ahead.got[k] = append(c.ahead.got[k], xs[i])
	}
}

// take returns the answer to r sent ahead, once, or nil.
func (a *ahead) take(r Request) *Exchange {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := aheadKey(r)
	xs := a.got[k]
	if len(xs) == 0 {
		return nil
	}
	a.got[k] = xs[1:]
	return xs[0]
}

// A listed is the last list a check read with List, kept while no
// request that could write (no GET or HEAD) was sent since: checks that
// only read the records share one list.
type listed struct {
	x   *Exchange
	ix  *Index
	gen uint64 // Client.writes when x was sent
}
