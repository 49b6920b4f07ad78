package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// openRedis opens a Redis store on url with records, closed when the test
// ends.
func openRedis(t *testing.T, url string, records []fixtures.Record) *Redis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := OpenRedis(ctx, url, records, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisLoadsFixturesOnce starts six stores together on an empty
// server: one loads the fixtures, the others wait for it.
func TestRedisLoadsFixturesOnce(t *testing.T) {
	srv := redistest.Start(t)
	const n = 6
	stores := make([]*Redis, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r, err := OpenRedis(ctx, srv.URL(0), pets(2000), Options{})
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = r
		}()
	}
	wg.Wait()
	loaded := 0
	for _, r := range stores {
		if r == nil {
			t.FailNow()
		}
		defer r.Close()
		if r.loaded.Load() {
			loaded++
		}
	}
	if loaded != 1 {
		t.Errorf("%d of %d stores loaded the fixtures; want 1", loaded, n)
	}
	if got := stores[0].client.HLen(context.Background(), stores[0].key("fixtures")).Val(); got != 2000 {
		t.Errorf("the server holds %d fixtures; want 2000", got)
	}
}

// TestRedisDownAndBack kills the server under a store: reads, writes and
// Health fail with ErrUnavailable, quickly, without the password; when the
// server is back, with its append-only file, the store serves again with
// every acknowledged write.
func TestRedisDownAndBack(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, append(redistest.Durable, "--requirepass", "s3cret")...)
	r := openRedis(t, "redis://:s3cret@"+srv.Addr+"/0", pets(10))
	if _, err := r.Update(ctx, "a", 2, setQuantity(222)); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	start := time.Now()
	for name, op := range map[string]func() error{
		"List":   func() error { _, err := r.List(ctx, "a"); return err },
		"Get":    func() error { _, err := r.Get(ctx, "a", 2); return err },
		"Update": func() error { _, err := r.Update(ctx, "a", 2, setQuantity(1)); return err },
		"Reset":  func() error { return r.Reset(ctx, "b") },
		"Health": func() error { return r.Health(ctx) },
		"Sessions": func() error {
			_, err := r.Sessions(ctx)
			return err
		},
	} {
		err := op()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s with the server down: error = %v; want ErrUnavailable", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("six calls with the server down took %v; want a quick 503", d)
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for r.Health(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Health = %v 5s after the server came back", r.Health(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := r.Get(ctx, "a", 2); err != nil || quantity(t, got) != 222 {
		t.Errorf("after the server came back: pet 2 of a = %s, %v; want 222", got.JSON, err)
	}
}

// TestRedisServerLostItsData restarts a server that keeps nothing: the
// store loads the fixtures again, and serves them, not what it had cached.
func TestRedisServerLostItsData(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	r := openRedis(t, srv.URL(0), pets(10))
	r.Update(ctx, DefaultSession, 3, setQuantity(333))
	list(t, r, DefaultSession) // cached, with the write
	srv.Kill()
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for r.Health(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Health = %v 5s after the server came back empty", r.Health(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if items := list(t, r, DefaultSession); items[2].Quantity != 30 {
		t.Errorf("after the server lost its data: pet 3 = %v; want the fixture's 30", items[2])
	}
	if n := r.client.HLen(ctx, r.key("fixtures")).Val(); n != 10 {
		t.Errorf("the server holds %d fixtures after the reload; want 10", n)
	}
}

// TestRedisRefusesAnotherFormat checks that keys of another format stop
// OpenRedis with a message.
func TestRedisRefusesAnotherFormat(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	c.HSet(context.Background(), DefaultRedisPrefix+"meta", "format", "inventory-mock redis store, format 0")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := OpenRedis(ctx, srv.URL(0), pets(3), Options{}); err == nil || !strings.Contains(err.Error(), "another version of inventory-mock") {
		t.Errorf("OpenRedis = %v; want an error about another version", err)
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, tt := range []struct {
		url    string
		prefix string // "" for an error
		where  string // or the error's text
	}{
		{"redis://127.0.0.1:6379/0", DefaultRedisPrefix, "redis://127.0.0.1:6379/0"},
		{"rediss://:pw@cache.internal:6380/2?prefix=team-a:", "team-a:", "rediss://:xxxxx@cache.internal:6380/2"},
		{"redis://user:pw@h:1/3?dial_timeout=3s", DefaultRedisPrefix, "redis://user:xxxxx@h:1/3?dial_timeout=3s"},
		{"redis://:pw@h:1/0?nosuch=1", "", "unexpected option: nosuch"},
		{"redis://:pw@h:1/x", "", "invalid database number"},
		{"http://:pw@h:1/0", "", "want a redis:// or rediss:// URL"},
		{"redis://:p w%zz@h/0", "", "not a URL"},
	} {
		_, prefix, where, err := ParseRedisURL(tt.url)
		switch {
		case tt.prefix == "" && (err == nil || !strings.Contains(err.Error(), tt.where)):
			t.Errorf("ParseRedisURL(%q) error = %v; want %q", tt.url, err, tt.where)
		case tt.prefix != "" && (err != nil || prefix != tt.prefix || where != tt.where):
			t.Errorf("ParseRedisURL(%q) = %q, %q, %v; want %q, %q", tt.url, prefix, where, err, tt.prefix, tt.where)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseRedisURL(%q): the error shows the password: %v", tt.url, err)
		}
	}
}

// TestRedisWaitsForTheServerAtStart opens a store before its server is
// up: OpenRedis waits, and serves once the server answers.
func TestRedisWaitsForTheServerAtStart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := OpenRedis(ctx, srv.URL(0), pets(3), Options{})
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	srv.Restart()
	if err := <-done; err != nil {
		t.Errorf("OpenRedis with the server up 300ms later: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	srv.Kill()
	if _, err := OpenRedis(ctx, srv.URL(0), pets(3), Options{}); err == nil || !strings.Contains(err.Error(), "no answer before the start-up deadline") {
		t.Errorf("OpenRedis with no server = %v; want 'no answer before the start-up deadline'", err)
	}
}

// TestRedisLostAnswerIsNotReapplied loses the answer to a write on its way
// back from the server, which applied it: the write fails with
// ErrUnavailable, and it is not sent again, where it would come back as a
// conflict with itself and be applied twice.
func TestRedisLostAnswerIsNotReapplied(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	p := newCuttingProxy(t, srv.Addr)
	r := openRedis(t, "redis://"+p.addr()+"/0", pets(3))
	if _, err := r.Update(ctx, DefaultSession, 1, increment); err != nil {
		t.Fatal(err)
	}
	p.cutNextReply()
	if _, err := r.Update(ctx, DefaultSession, 1, increment); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write whose answer was lost: error = %v; want ErrUnavailable", err)
	}
	if _, err := r.Update(ctx, DefaultSession, 1, increment); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get(ctx, DefaultSession, 1); quantity(t, got) != 13 {
		t.Errorf("pet 1 = %s after three increments, the answer of one lost; want 13 (each applied once)", got.JSON)
	}
}

// A cuttingProxy forwards connections to a Redis server, and can drop the
// next array reply and close its connection, as a network failure would.
type cuttingProxy struct {
	ln  net.Listener
	cut atomic.Bool
}

func newCuttingProxy(t *testing.T, target string) *cuttingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go p.back(c, s)
		}
	}()
	return p
}

func (p *cuttingProxy) addr() string { return p.ln.Addr().String() }

// cutNextReply makes the proxy drop the next array reply (a script's).
func (p *cuttingProxy) cutNextReply() { p.cut.Store(true) }

// back copies the server's replies to the client, unless one is cut.
func (p *cuttingProxy) back(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if err != nil {
			return
		}
		if buf[0] == '*' && p.cut.CompareAndSwap(true, false) {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}
