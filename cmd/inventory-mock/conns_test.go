package main

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnsUnderPressure: once three quarters of --max-connections are
// open, a new connection closes those idle for the pressure time, and
// leaves open the ones idle for less and the ones serving a request.
func TestConnsUnderPressure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitConns(ln, 4)
	l.pressureIdle = time.Second // long beside a loaded machine's stalls
	defer l.Close()
	accept := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return c, s
	}
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return err != nil && !isTimeout(err)
	}
	oldIdle, s1 := accept()
	busy, s2 := accept()
	l.track(s1, http.StateIdle)
	l.track(s2, http.StateActive)
	time.Sleep(1100 * time.Millisecond) // s1 idle past the pressure time
	newIdle, s3 := accept()             // 3 of 4 open, three quarters: the sweep closes s1
	l.track(s3, http.StateIdle)
	_, _ = accept() // 3 open again: the sweep runs, s3 idle for less
	if !closed(oldIdle) {
		t.Error("a connection idle past the pressure time is still open; want it closed")
	}
	for name, c := range map[string]net.Conn{"serving a request": busy, "idle for less than the pressure time": newIdle} {
		if closed(c) {
			t.Errorf("the connection %s was closed; want it open", name)
		}
	}
	if got := len(l.slots); got != 3 {
		t.Errorf("%d places taken after the sweep; want 3 (the closed one given back)", got)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
