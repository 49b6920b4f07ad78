package main

import (
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

// Under pressure (pressureShare of the cap open or more), connections
// idle for pressureIdle are closed when another one arrives, instead of
// after the server's idle timeout (120 s).
const (
	pressureShare = 0.75
	pressureIdle  = 5 * time.Second
)

// A connLimiter is a listener that serves at most max connections at once.
// A connection that arrives at the cap makes the one idle longest (between
// two requests) close, then waits for a free place; one that arrives past
// three quarters of the cap closes those idle for pressureIdle or longer.
// The server tells it which connections are idle through track, its
// ConnState hook. Its memory is bounded by max: one entry per open
// connection.
type connLimiter struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close

	closeOnce sync.Once // closes done

	mu   sync.Mutex // guards idle
	idle map[net.Conn]time.Time

	pressureIdle time.Duration // pressureIdle, shorter in tests
}

// limitConns returns ln serving at most max connections.
func limitConns(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}), idle: map[net.Conn]time.Time{}, pressureIdle: pressureIdle}
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
		// At the cap: make room, then wait for it.
		l.closeIdle(0, false)
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	if float64(len(l.slots)) >= pressureShare*float64(cap(l.slots)) {
		l.closeIdle(l.pressureIdle, true)
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops accepting; connections open stay open.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// track is the server's ConnState hook: it keeps the connections idle
// between two requests, and since when.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
}

// closeIdle closes the connection idle longest, or with all true every
// connection idle for d or longer. A request that arrives on one just as it
// is closed is lost as on any keep-alive connection a server closes:
// clients send an idempotent request again on a new connection.
func (l *connLimiter) closeIdle(d time.Duration, all bool) {
	now := time.Now()
	var victims []net.Conn
	var oldest net.Conn
	var since time.Time
	l.mu.Lock()
	for c, t := range l.idle {
		switch {
		case now.Sub(t) < d:
		case all:
			victims = append(victims, c)
			delete(l.idle, c)
		case oldest == nil || t.Before(since):
			oldest, since = c, t
		}
	}
	if oldest != nil {
		victims = append(victims, oldest)
		delete(l.idle, oldest)
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
