package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// redisArgs configure the bench's redis-server with the append-only file
// and the given appendfsync policy: always, the default and what the
// README recommends for a mock whose writes must survive a crash of Redis,
// syncs it before every answer to a write.
func redisArgs(fsync string) []string {
	return []string{"--save", "", "--appendonly", "yes", "--appendfsync", fsync}
}

// prepareStore makes what the mock of an engine scenario keeps its state
// in, a new file or a redis-server of its own, and returns the --store
// value, the engine's server if it has one, and a function that removes
// it all.
func prepareStore(ctx context.Context, kind, redisFsync string) (string, *server, func(), error) {
	dir, err := os.MkdirTemp("", "inventory-bench-"+kind+"-")
	if err != nil {
		return "", nil, nil, err
	}
	removeDir := func() { os.RemoveAll(dir) }
	switch kind {
	case "file":
		return "file:" + filepath.Join(dir, "state.db"), nil, removeDir, nil
	case "redis":
		srv, err := startRedis(ctx, dir, redisArgs(redisFsync))
		if err != nil {
			removeDir()
			return "", nil, nil, err
		}
		return "redis://" + srv.addr + "/0", srv, func() { srv.stop(); removeDir() }, nil
	}
	removeDir()
	return "", nil, nil, fmt.Errorf("no store engine %q", kind)
}

// startRedis starts redis-server with args on a free loopback port, its
// files in dir, and waits until it answers PING.
func startRedis(ctx context.Context, dir string, args []string) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed (apt-get install redis-server); the redis scenarios need it")
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append(args, "--port", port, "--bind", "127.0.0.1", "--dir", dir,
		"--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{name: "redis-server", addr: addr, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server exited at start; see %s", filepath.Join(dir, "redis.log"))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		default:
		}
		if pong(addr) {
			return s, nil
		}
	}
	s.stop()
	return nil, fmt.Errorf("redis-server: no PONG on %s within 10s", addr)
}

// cpuOrZero is the CPU time s has used, or 0 if s is nil or unreadable.
func (s *server) cpuOrZero() time.Duration {
	if s == nil {
		return 0
	}
	d, _ := s.cpu()
	return d
}

// pong reports whether a Redis server at addr answers PING.
func pong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// engineNote says, under the summary, what the rows of engine scenarios
// compare.
func (b *bench) engineNote() {
	for _, r := range b.rows {
		if r.s.store != "" {
			fmt.Fprintf(b.out, "In the rows %s, \"mock\" is the mock on that store (redis-server %s) and \"baseline\" the mock on memory, in the same run.\n\n",
				strings.Join(engineRows(b.rows), ", "), shell(redisArgs(b.o.RedisFsync)))
			return
		}
	}
}

func engineRows(rows []row) []string {
	var names []string
	for _, r := range rows {
		if r.s.store != "" {
			names = append(names, r.s.name)
		}
	}
	return names
}

// shell writes args as a shell command line would, ” for an empty one.
func shell(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" {
			out[i] = "''"
		}
	}
	return strings.Join(out, " ")
}
