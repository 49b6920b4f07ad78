package conformance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// A stopper ends a run before its checks are done: when the target is
// gone (goneAfter requests in a row got no answer), when --max-run-time
// is up, or on an interrupt.
type stopper struct {
	ctx    context.Context // ends when the run stops
	cancel context.CancelFunc
	timer  *time.Timer // --max-run-time; nil: none

	mu     sync.Mutex // guards why, gone and missed
	why    string     // why the run stopped; "" while it runs
	gone   bool       // the target stopped answering: restores are not tried
	missed int        // requests in a row without an answer
}

func (s *stopper) init(maxRun time.Duration) {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if maxRun > 0 {
		s.timer = time.AfterFunc(maxRun, func() {
			s.halt(fmt.Sprintf("the run took longer than --max-run-time %s", maxRun), false)
		})
	}
}

// end releases the stopper's timer.
func (s *stopper) end() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.cancel()
}

// halt stops the run for why; the first reason given is kept.
func (s *stopper) halt(why string, gone bool) {
	s.mu.Lock()
	if s.why == "" {
		s.why, s.gone = why, gone
	}
	s.mu.Unlock()
	s.cancel()
}

// reason says why the run stopped ("" while it runs) and whether the
// target is gone.
func (s *stopper) reason() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why, s.gone
}

// answered counts requests in a row without an answer, and declares the
// target gone at goneAfter of them. ended says the request's own context
// ended: then it says nothing of the target.
func (s *stopper) answered(x *Exchange, ended bool) {
	missed := x.Failure == exchange.FailureNoAnswer && !ended && x.Cause != errStopped
	s.mu.Lock()
	switch {
	case x.Failure != exchange.FailureNoAnswer:
		s.missed = 0
	case missed:
		s.missed++
	}
	n := s.missed
	s.mu.Unlock()
	if missed && n >= goneAfter {
		s.halt(fmt.Sprintf("the target stopped answering: %d requests in a row got no answer (the last: %s)", n, x.Method+" "+x.URL+": "+x.Err), true)
	}
}

// Halt stops the run for why, as an interrupt does: the check running is
// stopped, those left are not run, and the reports say why. Records
// written to are still restored.
func (t *Target) Halt(why string) { t.stop.halt(why, false) }

// Close releases the --max-run-time timer.
func (t *Target) Close() { t.stop.end() }
