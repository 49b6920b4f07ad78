package main

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// defaultShutdownGrace is --shutdown-grace's default: long enough for any
// request of a mock on this machine, short enough that the reports are
// written before a container engine's 10 s between SIGTERM and SIGKILL.
const defaultShutdownGrace = 5 * time.Second

// afterCut is how long a stop waits, once it has cut the requests still in
// flight, for their handlers to see it and return, so that the proxy
// records them before it writes its reports.
const afterCut = 2 * time.Second

// An inFlight keeps the requests being served, so that a stop that has to
// cut some can say which.
type inFlight struct {
	mu   sync.Mutex // guards reqs
	reqs map[*http.Request]cutRequest
	wg   sync.WaitGroup // one per handler running
}

// A cutRequest is a request a stop cut: its method and path (never the
// query, which may hold a key), and how long it had run.
type cutRequest struct {
	Method, Path string
	start        time.Time
	Ran          time.Duration
}

// String is the request as the log and the reports name it.
func (c cutRequest) String() string {
	return fmt.Sprintf("%s %s, cut after %s", c.Method, c.Path, c.Ran.Round(time.Millisecond))
}

func newInFlight() *inFlight { return &inFlight{reqs: map[*http.Request]cutRequest{}} }

// begin keeps r while its handler runs, until end(r).
func (f *inFlight) begin(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs[r] = cutRequest{Method: r.Method, Path: r.URL.Path, start: time.Now()}
	f.wg.Add(1)
}

// end forgets r once its handler has returned.
func (f *inFlight) end(r *http.Request) {
	f.mu.Lock()
	delete(f.reqs, r)
	f.mu.Unlock()
	f.wg.Done()
}

// list returns the requests in flight, oldest first, with how long each
// has run.
func (f *inFlight) list() []cutRequest {
	now := time.Now()
	f.mu.Lock()
	out := make([]cutRequest, 0, len(f.reqs))
	for _, c := range f.reqs {
		c.Ran = now.Sub(c.start)
		out = append(out, c)
	}
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b cutRequest) int { return a.start.Compare(b.start) })
	return out
}

// wait waits for the handlers running to return, for d at most.
func (f *inFlight) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
