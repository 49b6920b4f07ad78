package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// defaultMaxConns is --max-connections' default: far more than browsers
// (6 per origin), test suites and load tools open against a mock, and few
// enough that their buffers stay small (about 25 KiB of memory each when
// idle) and that they fit in a container's usual 1,024 open files, with
// room for a Redis store's pool.
const defaultMaxConns = 512

// Under pressure (pressureShare of the cap open or more), a new connection
// closes those idle for pressureIdle; one whose request has been arriving
// for slowAfter is slow (a LAN client sends one in milliseconds).
const (
	pressureShare = 0.75
	pressureIdle  = 5 * time.Second
	slowAfter     = time.Second
)

// A connLimiter is a listener that serves at most max connections at once,
// making room at the cap by closing one other (shed), as README.md,
// Connections and timeouts, says: a crowd of clients that send a byte at a
// time cannot keep the places. The server tells it each connection's state
// through track, its ConnState hook, and through serving when a request's
// body has been read. Its memory is bounded by max: one entry per open
// connection.
type connLimiter struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	mu    sync.Mutex // guards conns and the connState they point to
	conns map[net.Conn]*connState

	pressureIdle time.Duration // pressureIdle, shorter in tests
	slowAfter    time.Duration // slowAfter, shorter in tests
}

// A connState is what the limiter knows of one open connection.
type connState struct {
	state http.ConnState // new, active or idle
	since time.Time      // when it entered state
	// answering counts the requests on it whose bodies have been read
	// whole and whose handlers still run (more than one over HTTP/2): a
	// connection answering one is not closed to make room.
	answering int
}

func limitConns(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}),
		conns: map[net.Conn]*connState{}, pressureIdle: pressureIdle, slowAfter: slowAfter}
}

// Accept waits for a connection and a free place for it.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		// At the cap: make room, then wait for it; where no connection
		// could be closed, look again now and then.
		for placed := false; !placed; {
			l.shed()
			select {
			case l.slots <- struct{}{}:
				placed = true
			case <-time.After(100 * time.Millisecond):
			case <-l.done:
				c.Close()
				return nil, net.ErrClosed
			}
		}
	}
	if float64(len(l.slots)) >= pressureShare*float64(cap(l.slots)) {
		l.closeIdle(l.pressureIdle)
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops accepting; connections open stay open.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// track is the server's ConnState hook.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateNew, http.StateActive, http.StateIdle:
		s := l.conns[c]
		if s == nil {
			s = &connState{}
			l.conns[c] = s
		}
		s.state, s.since = state, time.Now()
	default:
		delete(l.conns, c)
	}
}

type connKey struct{}

// connContext is the server's ConnContext hook: it puts the connection in
// the context of its requests, for serving.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// serving is the handler around the mock's, the first a request meets:
// it keeps the request among those in flight while its handler runs (for
// a stop that has to cut some), and tells the limiter when the request
// has arrived whole: at once for a request without a body, else when its
// handler has read the body to its end. From then until the handler
// returns, its connection is not closed to make room.
func (l *connLimiter) serving(flights *inFlight, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flights.begin(r)
		defer flights.end(r)
		if c, _ := r.Context().Value(connKey{}).(net.Conn); c != nil {
			a := &arrival{ReadCloser: r.Body, l: l, c: c}
			defer a.end()
			if r.Body == nil || r.Body == http.NoBody {
				a.mark()
			} else {
				r.Body = a
			}
		}
		next.ServeHTTP(w, r)
	})
}

// An arrival is one request's part in its connection's answering count;
// as the request's body, it marks the request arrived once read to its end.
type arrival struct {
	io.ReadCloser
	l      *connLimiter
	c      net.Conn
	marked bool // counted in answering; only the handler's goroutine reads or writes it
}

func (a *arrival) mark() {
	if a.marked {
		return
	}
	a.marked = true
	a.l.mu.Lock()
	if s := a.l.conns[a.c]; s != nil {
		s.answering++
	}
	a.l.mu.Unlock()
}

// end takes the request out of the count once its handler has returned.
func (a *arrival) end() {
	if !a.marked {
		return
	}
	a.l.mu.Lock()
	if s := a.l.conns[a.c]; s != nil && s.answering > 0 {
		s.answering--
		// The answer is being written: its age counts from now, so that it
		// is not cut as a request slow to arrive.
		s.since = time.Now()
	}
	a.l.mu.Unlock()
}

func (a *arrival) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if err == io.EOF {
		a.mark()
	}
	return n, err
}

// shed closes one connection to make room, if there is one it may close:
// the one whose request has been arriving longest if that is slowAfter or
// more, else the one idle longest, else the oldest arriving one; never one
// being answered.
func (l *connLimiter) shed() {
	now := time.Now()
	var arriving, idle net.Conn // the oldest of each
	var arrivingSince, idleSince time.Time
	l.mu.Lock()
	for c, s := range l.conns {
		switch {
		case s.state == http.StateIdle:
			if idle == nil || s.since.Before(idleSince) {
				idle, idleSince = c, s.since
			}
		case s.answering == 0:
			if arriving == nil || s.since.Before(arrivingSince) {
				arriving, arrivingSince = c, s.since
			}
		}
	}
	victim := arriving
	if idle != nil && (arriving == nil || now.Sub(arrivingSince) < l.slowAfter) {
		victim = idle
	}
	if victim != nil {
		delete(l.conns, victim)
	}
	l.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
}

// closeIdle closes every connection idle for d or longer. A request that
// arrives on one just as it is closed is lost as on any keep-alive
// connection a server closes: clients send an idempotent request again on
// a new connection.
func (l *connLimiter) closeIdle(d time.Duration) {
	now := time.Now()
	var victims []net.Conn
	l.mu.Lock()
	for c, s := range l.conns {
		if s.state == http.StateIdle && now.Sub(s.since) >= d {
			victims = append(victims, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range victims {
		c.Close()
	}
}

// A limitedConn gives its place back when it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
