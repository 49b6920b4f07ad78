package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// TestSlowClientsCannotLockOthersOut fills the mock's connections with
// clients that send a PATCH body, or their headers, a byte at a time and
// connect again whenever they are cut (a slowloris): other clients'
// requests are answered while it goes on, each within a few seconds.
// Without shedding, the slow clients keep every place for the 30 s read
// timeout. INVENTORY_SLOW_CLIENTS=600 runs it with 600 slow clients against
// the default cap, as the README's figure was measured.
func TestSlowClientsCannotLockOthersOut(t *testing.T) {
	if testing.Short() {
		t.Skip("a slow attack of several seconds")
	}
	slow, args := 40, []string{"--max-connections", "32"}
	if n, _ := strconv.Atoi(os.Getenv("INVENTORY_SLOW_CLIENTS")); n > 0 {
		slow, args = n, nil // the default cap
	}
	addr, _ := start(t, args, env(nil), io.Discard)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	var cuts atomic.Int64
	for i := range slow {
		head := "PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer inventory-dev-key\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
		if i%4 == 3 { // a quarter send their headers slowly
			head = "GET /v1/inventory HTTP/1.1\r\n"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					_, err = io.WriteString(c, head)
				}
				for err == nil {
					select {
					case <-stop:
						c.Close()
						return
					case <-time.After(300 * time.Millisecond):
					}
					_, err = c.Write([]byte{' '})
				}
				if c != nil {
					c.Close()
				}
				cuts.Add(1)
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
	}
	time.Sleep(2 * time.Second) // every place taken, by requests older than slowAfter
	client := &http.Client{Timeout: 4 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	base := "http://" + addr + "/v1/inventory"
	for i, r := range []struct{ method, url, body string }{
		{"GET", base, ""},
		{"PATCH", base + "/1", `{"quantity": 5}`},
		{"GET", base + "?limit=1", ""},
	} {
		begin := time.Now()
		req, _ := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer inventory-dev-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("request %d, %s %s, during the attack: %v; want it answered", i+1, r.method, r.url, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("request %d, %s %s, during the attack = %d; want 200", i+1, r.method, r.url, resp.StatusCode)
		}
		t.Logf("%s %s answered in %v during the attack", r.method, r.url, time.Since(begin).Round(time.Millisecond))
	}
	t.Logf("%d slow connections cut so far", cuts.Load())
}
