package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// childEnv, set to 1, makes the test binary run the mock with its
// arguments instead of the tests: the fault tests start it as a child
// process, to kill it with SIGKILL.
const childEnv = "INVENTORY_MOCK_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "inventory-mock:", err)
		}
		os.Exit(cli.Code(err)) // as cli.Main
	}
	os.Exit(m.Run())
}

func TestParseStore(t *testing.T) {
	for _, tt := range []struct {
		value string
		kind  string // "" for an error
		safe  string // or the error's text
	}{
		{"memory", storeMemory, "memory"},
		{"file:/var/lib/mock/state.db", storeFile, "file:/var/lib/mock/state.db"},
		{"file:state.db", storeFile, "file:state.db"},
		{"file:///var/lib/mock/state.db", storeFile, "file:/var/lib/mock/state.db"},
		{"file://localhost/state.db", storeFile, "file:/state.db"},
		{"file://u:hunter2@host/state.db", "", "no user, password or host"},
		{"file://host/state.db", "", "no user, password or host"},
		{"redis://127.0.0.1:6379/0", storeRedis, "redis://127.0.0.1:6379/0"},
		{"redis://:hunter2@cache:6379/1", storeRedis, "redis://:xxxxx@cache:6379/1"},
		{"rediss://u:hunter2@cache:6380/0?prefix=team-a:", storeRedis, "rediss://u:xxxxx@cache:6380/0"},
		{"redis://hunter2@cache:6379/0", storeRedis, "redis://xxxxx@cache:6379/0"},
		{"redis://hunter2:@cache:6379/0", storeRedis, "redis://xxxxx@cache:6379/0"},
		{"redis://cache:6379/0?client_name=hunter2", storeRedis, "redis://cache:6379/0?client_name=xxxxx"},
		{"", "", "unknown kind"},
		{"Memory", "", "unknown kind"},
		{"file:", "", "needs a path"},
		{"file:a\x00b", "", "NUL"},
		{"redis://:hunter2@cache:6379/x", "", "invalid database number"},
		{"redis://:hunter2@cache:6379/0?retries=3", "", "unexpected option"},
		{"redis:/:hunter2@cache", "", "unknown kind"},
		{"postgres://u:hunter2@db/x", "", "unknown kind"},
		{"u:hunter2@cache:6379", "", "unknown kind"},
	} {
		got, err := parseStore(tt.value)
		switch {
		case tt.kind == "" && (err == nil || !strings.Contains(err.Error(), tt.safe)):
			t.Errorf("parseStore(%q) error = %v; want %q", tt.value, err, tt.safe)
		case tt.kind != "" && (err != nil || got.kind != tt.kind || got.safe != tt.safe):
			t.Errorf("parseStore(%q) = %+v, %v; want kind %s, shown as %q", tt.value, got, err, tt.kind, tt.safe)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseStore(%q): the error shows the password: %v", tt.value, err)
		}
	}
}

// TestStoreFlagErrorHidesPassword checks the message of a bad --store
// given on the command line, where the flag package would repeat it.
func TestStoreFlagErrorHidesPassword(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--store", "redis://:hunter2@cache:6379/x"}, nil},
		{[]string{"--store", "redis:/:hunter2@cache"}, nil},
		{nil, map[string]string{"INVENTORY_MOCK_STORE": "redis://:hunter2@cache:6379/x"}},
	} {
		_, err := parse(tt.args, env(tt.env))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parse(%q, %v) = %v; want an error without the password", tt.args, tt.env, err)
		}
	}
}

// FuzzParseStore checks that no --store value makes the parser panic, and
// that neither what it shows of a URL nor its error repeats the URL's
// password: the value, given a password no other part of it holds, is
// parsed again.
func FuzzParseStore(f *testing.F) {
	for _, v := range []string{"memory", "file:x.db", "redis://:pw@h:1/0", "rediss://u:pw@h/0?prefix=a", "redis://[::1]:6379/0", "file:"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		parseStore(v)
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return
		}
		const secret = "Zq9-s3cret-7Kx"
		u.User = url.UserPassword(u.User.Username(), secret)
		got, err := parseStore(u.String())
		shown := got.safe
		if err != nil {
			shown = err.Error()
		}
		if strings.Contains(shown, secret) {
			t.Errorf("parseStore(%q) shows the password: %q", u.String(), shown)
		}
	})
}

// A child is the mock running as a child process (the test binary, in
// TestMain's child mode).
type child struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
}

// startChild starts the mock with args on a free port and waits until
// /healthz answers 200.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &child{addr: addr, exited: make(chan struct{}), log: &syncBuffer{}}
	c.cmd = exec.Command(os.Args[0], append([]string{"--addr", addr, "--api-key", "k"}, args...)...)
	c.cmd.Env = append(os.Environ(), childEnv+"=1")
	c.cmd.Stdout, c.cmd.Stderr = io.Discard, c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.kill)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a million pets take seconds on a loaded machine
		select {
		case <-c.exited:
			t.Fatalf("the mock exited at start:\n%s", c.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mock did not answer /healthz within 60s:\n%s", c.log)
		}
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return c
			}
		}
	}
}

// waitHealthy waits until the child's /healthz answers 200, failing the
// test after within.
func waitHealthy(t *testing.T, c *child, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, body := get(t, http.DefaultClient, "http://"+c.addr+"/healthz", "")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz %v after Redis came back = %d %s; want 200", within, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the child with SIGKILL, as a crash would.
func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.exited
}

// A writer sets the quantity of one pet to 1, 2, 3, ..., and remembers the
// last value acknowledged with 200 and the last one sent: after a crash,
// the pet must hold a value between them.
type writer struct {
	pet       int
	acked     int
	attempted int
	statuses  map[int]int // status -> count; 0: no answer
}

// hammer runs one writer per pet against the mocks, each sending to them
// in turn, until stop is closed; wait returns once they have all stopped.
func hammer(pets int, mocks func() []string, stop <-chan struct{}) (ws []*writer, wait func()) {
	ws = make([]*writer, pets)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range ws {
		w := &writer{pet: i + 1, statuses: map[int]int{}}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				addrs := mocks()
				v := w.attempted + 1
				w.attempted = v
				status := patch(client, addrs[n%len(addrs)], w.pet, v)
				w.statuses[status]++
				if status == 200 {
					w.acked = v
				}
				if status == 0 || status == 503 {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	return ws, wg.Wait
}

// patch sets the quantity of pet and returns the status, 0 if none came.
func patch(client *http.Client, addr string, pet, quantity int) int {
	req, _ := http.NewRequest("PATCH", fmt.Sprintf("http://%s/v1/inventory/%d", addr, pet), strings.NewReader(fmt.Sprintf(`{"quantity":%d}`, quantity)))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// quantities lists the mock's pets: petId -> quantity.
func quantities(t *testing.T, addr string) map[int]int {
	t.Helper()
	code, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "k")
	if code != 200 {
		t.Fatalf("GET /v1/inventory: %d %s", code, body)
	}
	var items []struct{ PetID, Quantity int }
	if err := json.Unmarshal([]byte(body), &items); err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, it := range items {
		out[it.PetID] = it.Quantity
	}
	return out
}

// checkAcknowledged checks that every pet holds its last acknowledged
// value or a later one that was sent.
func checkAcknowledged(t *testing.T, ws []*writer, got map[int]int) {
	t.Helper()
	acked, statuses := 0, map[int]int{}
	for _, w := range ws {
		acked += w.statuses[200]
		for status, n := range w.statuses {
			statuses[status] += n
		}
		if q := got[w.pet]; w.acked > 0 && (q < w.acked || q > w.attempted) {
			t.Errorf("pet %d holds %d; its last acknowledged write was %d, its last sent %d", w.pet, q, w.acked, w.attempted)
		}
	}
	if acked == 0 {
		t.Fatal("no write was acknowledged")
	}
	t.Logf("answers by status (0: none): %v", statuses)
}

// TestFileSurvivesKill writes to a mock on a file store from 16 clients,
// kills it with SIGKILL mid-load, starts it again on the file, and checks
// that every acknowledged write is there.
func TestFileSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	mock := startChild(t, "--store", "file:"+path)
	stop := make(chan struct{})
	ws, wait := hammer(16, func() []string { return []string{mock.addr} }, stop)
	time.Sleep(700 * time.Millisecond)
	mock.kill()
	close(stop)
	wait()

	again := startChild(t, "--store", "file:"+path)
	if !strings.Contains(again.log.String(), "serving the state kept in the file") {
		t.Errorf("the restarted mock does not say it serves the file's state:\n%s", again.log)
	}
	checkAcknowledged(t, ws, quantities(t, again.addr))
}

// TestFileSurvivesTerm writes to a mock on a file store from 16 clients,
// stops it with SIGTERM mid-load, as a container runtime or systemd
// stops it, starts it again on the file, and checks that it exited 0,
// said it was shutting down, and that every acknowledged write is there.
func TestFileSurvivesTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops child processes")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	mock := startChild(t, "--store", "file:"+path)
	stop := make(chan struct{})
	ws, wait := hammer(16, func() []string { return []string{mock.addr} }, stop)
	time.Sleep(700 * time.Millisecond)
	if err := mock.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-mock.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("the mock did not exit within 10s of SIGTERM:\n%s", mock.log)
	}
	close(stop)
	wait()
	if code := mock.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(mock.log.String(), "shutting down") {
		t.Errorf("after SIGTERM: exit status %d; want 0, and 'shutting down' in the log:\n%s", code, mock.log)
	}

	again := startChild(t, "--store", "file:"+path)
	if !strings.Contains(again.log.String(), "serving the state kept in the file") {
		t.Errorf("the restarted mock does not say it serves the file's state:\n%s", again.log)
	}
	checkAcknowledged(t, ws, quantities(t, again.addr))
}

// TestRedisReplicasSurviveRedisKill runs two mocks on one Redis, writes
// to both from 16 clients, kills Redis mid-load and starts it again from
// its append-only file: the mocks answer only 200 or the documented 503,
// /healthz says 503 while Redis is down, and every acknowledged write is
// there, read the same on both mocks.
func TestRedisReplicasSurviveRedisKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes and a redis-server")
	}
	srv := redistest.Start(t, redistest.Durable...)
	url := srv.URL(0)
	a := startChild(t, "--store", url)
	b := startChild(t, "--store", url)
	stop := make(chan struct{})
	ws, wait := hammer(16, func() []string { return []string{a.addr, b.addr} }, stop)
	time.Sleep(500 * time.Millisecond)
	srv.Kill()
	time.Sleep(300 * time.Millisecond)
	if code, body := get(t, http.DefaultClient, "http://"+a.addr+"/healthz", ""); code != 503 || !strings.Contains(body, "unavailable") {
		t.Errorf("/healthz with Redis down = %d %s; want 503 unavailable", code, body)
	}
	srv.Restart()
	// The mocks recover by themselves: go-redis probes a server it could
	// not reach once a second.
	for _, m := range []*child{a, b} {
		waitHealthy(t, m, 5*time.Second)
	}
	time.Sleep(300 * time.Millisecond) // writes after the recovery
	close(stop)
	wait()

	for _, w := range ws {
		for status, n := range w.statuses {
			if status != 200 && status != 503 {
				t.Errorf("pet %d: %d answers with status %d; want only 200 and 503", w.pet, n, status)
			}
		}
	}
	onA, onB := quantities(t, a.addr), quantities(t, b.addr)
	checkAcknowledged(t, ws, onA)
	if fmt.Sprint(onA) != fmt.Sprint(onB) {
		t.Errorf("the two mocks list different quantities:\n%v\n%v", onA, onB)
	}
}
