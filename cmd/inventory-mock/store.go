package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store"
)

// A storeFlag is the value of --store, parsed: where the mock keeps its
// state. The flag itself is a string, parsed after the flag package is
// done, whose errors would repeat the value and with it a password.
type storeFlag struct {
	kind string // "memory", "file" or "redis"
	path string // of a file store
	url  string // of a redis store, as given: it may hold a password, never log it
	safe string // the value without a password, for messages
}

// Kinds of store.
const (
	storeMemory = "memory"
	storeFile   = "file"
	storeRedis  = "redis"
)

// parseStore reads memory, file:PATH, or a redis:// or rediss:// URL. Its
// errors never repeat a password the value holds.
func parseStore(v string) (storeFlag, error) {
	switch {
	case v == storeMemory:
		return storeFlag{kind: storeMemory, safe: storeMemory}, nil
	case strings.HasPrefix(v, "file:"):
		path, err := filePath(strings.TrimPrefix(v, "file:"))
		if err != nil {
			return storeFlag{}, err
		}
		return storeFlag{kind: storeFile, path: path, safe: "file:" + path}, nil
	case strings.HasPrefix(v, "redis://") || strings.HasPrefix(v, "rediss://"):
		_, _, safe, err := store.ParseRedisURL(v)
		if err != nil {
			return storeFlag{}, err
		}
		return storeFlag{kind: storeRedis, url: v, safe: safe}, nil
	}
	kind, _, _ := strings.Cut(v, ":")
	if len(kind) > 16 || strings.ContainsAny(kind, "/@") {
		kind = kind[:min(len(kind), 16)] + "…"
	}
	return storeFlag{}, fmt.Errorf("unknown kind %q: want memory, file:PATH or redis://HOST:PORT/DB", kind)
}

// filePath reads the path of file:PATH, or of a URL file:///PATH.
func filePath(path string) (string, error) {
	if strings.HasPrefix(path, "//") {
		u, err := url.Parse("file:" + path)
		switch {
		case err != nil:
			return "", errors.New("file: not a file:///PATH URL")
		case u.User != nil || (u.Host != "" && u.Host != "localhost"):
			return "", errors.New("file: a file:///PATH URL names no user, password or host")
		}
		path = u.Path
	}
	switch {
	case path == "":
		return "", errors.New("file: needs a path, as in file:/var/lib/inventory-mock/state.db")
	case strings.ContainsRune(path, 0):
		return "", errors.New("file: the path holds a NUL byte")
	}
	return path, nil
}

// redisStartTimeout is how long the mock waits for its Redis server at
// start-up before it gives up.
const redisStartTimeout = 30 * time.Second

// openStore opens the store f names, with the records of d and the
// session limits of opts. The state a file or Redis already holds must
// have been made from the same records and contract, and its records must
// be records of d's shape.
func openStore(ctx context.Context, f storeFlag, d *data, opts store.Options, logger *slog.Logger) (store.Store, error) {
	opts.Origin, opts.Logger, opts.Shape = "contract sha256:"+digest(d.contract.Raw), logger, d.shape
	switch f.kind {
	case storeFile:
		return store.OpenFile(f.path, d.records, opts)
	case storeRedis:
		ctx, cancel := context.WithTimeout(ctx, redisStartTimeout)
		defer cancel()
		return store.OpenRedis(ctx, f.url, d.records, opts)
	}
	return store.NewMemory(d.records, opts), nil
}
