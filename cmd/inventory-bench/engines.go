package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store/redistest"
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
		addr, err := redistest.FreeAddr()
		if err != nil {
			removeDir()
			return "", nil, nil, err
		}
		cmd, exited, err := redistest.Launch(ctx, addr, dir, redisArgs(redisFsync)...)
		if err != nil {
			removeDir()
			return "", nil, nil, err
		}
		srv := &server{name: "redis-server", addr: addr, cmd: cmd, exited: exited}
		return "redis://" + addr + "/0", srv, func() { srv.stop(); removeDir() }, nil
	}
	removeDir()
	return "", nil, nil, fmt.Errorf("no store engine %q", kind)
}

// cpuOrZero is the CPU time s has used, or 0 if s is nil or unreadable.
func (s *server) cpuOrZero() time.Duration {
	if s == nil {
		return 0
	}
	d, _ := s.cpu()
	return d
}

// engineNote says, under the summary, what the rows of engine scenarios
// compare.
func (b *bench) engineNote() {
	var names []string
	for _, r := range b.rows {
		if r.s.store != "" {
			names = append(names, r.s.name)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(b.out, "In the rows %s, \"mock\" is the mock on that store (redis-server %s) and \"baseline\" the mock on memory, in the same run.\n\n",
			strings.Join(names, ", "), shell(redisArgs(b.o.RedisFsync)))
	}
}

// shell writes args as a shell command line would, ” for an empty one.
func shell(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = cmp.Or(a, "''")
	}
	return strings.Join(out, " ")
}
