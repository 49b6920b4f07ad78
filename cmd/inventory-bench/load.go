package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A conn is one keep-alive HTTP/1.1 connection of the load client. The
// client writes requests and reads responses by hand, so that it costs as
// little CPU as it can: it shares the machine with the server it measures.
type conn struct {
	nc net.Conn
	br *bufio.Reader
}

func dial(addr string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

// do sends one request, reads the whole response and returns its status.
// body, if not nil, receives the response body; otherwise it is discarded.
func (c *conn) do(req []byte, body *bytes.Buffer) (int, error) {
	if _, err := c.nc.Write(req); err != nil {
		return 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, closing := -1, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, fmt.Errorf("Transfer-Encoding %q: the client reads only Content-Length bodies", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			closing = true
		}
	}
	if length < 0 {
		return 0, errors.New("response without Content-Length")
	}
	if body != nil {
		body.Reset()
		_, err = io.CopyN(body, c.br, int64(length))
	} else {
		_, err = c.br.Discard(length)
	}
	if err == nil && closing {
		err = errors.New("server closed the connection")
	}
	return status, err
}

func (c *conn) close() { c.nc.Close() }

// A request is one request of a scenario and the status it must get.
type request struct {
	raw    []byte
	status int
}

// A result is what one load round measured.
type result struct {
	requests  int
	failures  int // wrong status or a broken connection
	elapsed   time.Duration
	latencies []time.Duration // sorted
	firstErr  error
	serverCPU time.Duration // CPU time the server used in the round, to 10ms
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// cpuPerRequest is the server's CPU time per request.
func (r result) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.serverCPU / time.Duration(r.requests)
}

// percentile returns the p-th percentile (0 < p <= 1) of the latencies.
func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies))*p+0.5) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

// load runs clients goroutines against addr for d, each on its own
// keep-alive connection, each sending the requests next gives it back to
// back (the n-th request of client c is next(c, n)).
func load(ctx context.Context, addr string, clients int, d time.Duration, next func(client, n int) request) result {
	conns := make([]*conn, clients)
	for i := range conns {
		c, err := dial(addr)
		if err != nil {
			for _, c := range conns[:i] {
				c.close()
			}
			return result{failures: 1, firstErr: err, elapsed: time.Nanosecond}
		}
		conns[i] = c
	}
	type partial struct {
		lat      []time.Duration
		failures int
		err      error
	}
	parts := make([]partial, clients)
	start := make(chan struct{}) // closed once deadline is set
	var wg sync.WaitGroup
	var deadline time.Time
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[i]
			p.lat = make([]time.Duration, 0, 4096)
			c := conns[i]
			<-start
			for n := 0; ; n++ {
				t0 := time.Now()
				if !t0.Before(deadline) || ctx.Err() != nil {
					return
				}
				req := next(i, n)
				status, err := c.do(req.raw, nil)
				p.lat = append(p.lat, time.Since(t0))
				if err == nil && status != req.status {
					err = fmt.Errorf("status %d; want %d", status, req.status)
				}
				if err != nil {
					p.failures++
					if p.err == nil {
						p.err = err
					}
					c.close()
					if c, err = dial(addr); err != nil {
						return
					}
					conns[i] = c
				}
			}
		}()
	}
	begin := time.Now()
	deadline = begin.Add(d)
	close(start)
	wg.Wait()
	r := result{elapsed: time.Since(begin)}
	for i, p := range parts {
		r.latencies = append(r.latencies, p.lat...)
		r.failures += p.failures
		if r.firstErr == nil {
			r.firstErr = p.err
		}
		conns[i].close()
	}
	r.requests = len(r.latencies)
	slices.Sort(r.latencies)
	return r
}
