package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/spec"
)

// settleTime is how long the watcher waits after the last change in the
// spec's directory before it loads the spec: an editor's save is several
// events (a temporary file written, renamed over the spec), and a tool may
// write a file in pieces.
const settleTime = 150 * time.Millisecond

// A specWatcher reloads the mock's contract when the --spec file, or a
// YAML or JSON file next to it (one its $refs may name), changes. It watches the
// directory, not the file: an editor that saves by writing a new file and
// renaming it over the old one replaces the file a watch on it would
// follow.
type specWatcher struct {
	file        string
	refsOutside bool // --spec-refs-outside
	mock        *mockserver.Server
	metrics     *metrics.Metrics // nil: none
	logger      *slog.Logger
	w           *fsnotify.Watcher
	// failed is the last edit that did not load: the digest of the spec
	// file and the reason, so that each is logged once, not at every
	// event that follows it.
	failed string
}

// watchSpec starts watching file for mock; stop ends it.
func watchSpec(ctx context.Context, file string, refsOutside bool, mock *mockserver.Server, m *metrics.Metrics, logger *slog.Logger) (stop func(), err error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("--watch: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("--watch: %w", err)
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, fmt.Errorf("--watch: %s: %w", filepath.Dir(abs), err)
	}
	sw := &specWatcher{file: file, refsOutside: refsOutside, mock: mock, metrics: m, logger: logger, w: w}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go sw.run(ctx, done)
	logger.Info("watching the spec: an edit is loaded without a restart", "file", file, "directory", filepath.Dir(abs))
	return func() {
		cancel()
		w.Close()
		<-done
	}, nil
}

// run waits for changes until ctx is done, and loads the spec once they
// have settled.
func (sw *specWatcher) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sw.w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !specLike(ev.Name) {
				continue // touched, not changed; or not a file a spec is made of
			}
			timer.Reset(settleTime)
		case err, ok := <-sw.w.Errors:
			if !ok {
				return
			}
			sw.logger.Warn("watching the spec", "error", err)
		case <-timer.C:
			sw.reload(ctx)
		}
	}
}

// reload loads the spec and puts it in force, unless it is the document
// in force already; an edit that does not load is logged once, and the
// contract in force keeps serving.
func (sw *specWatcher) reload(ctx context.Context) {
	begin := time.Now()
	doc, err := readSpec(sw.file, sw.refsOutside)
	var c *spec.Contract
	if err == nil {
		if digest(doc) == digest(sw.mock.Contract().Raw) {
			sw.failed = "" // back to what is in force: a new failure is news
			return
		}
		if c, err = spec.Load(doc); err != nil && sw.metrics != nil {
			sw.metrics.Reload(false) // Reload counts the ones it is given
		}
	}
	if err == nil {
		err = sw.mock.Reload(ctx, c)
	}
	if err != nil {
		raw, _ := os.ReadFile(sw.file)
		failure := digest(raw) + "\x00" + err.Error()
		if failure == sw.failed {
			return
		}
		sw.failed = failure
		sw.logger.Warn("spec edit not loaded; the contract in force keeps serving", "file", sw.file, "reason", err.Error(), "in_force_sha256", digest(sw.mock.Contract().Raw))
		return
	}
	sw.failed = ""
	title, version := "", ""
	if info := c.Model.Info; info != nil {
		title, version = info.Title, info.Version
	}
	sw.logger.Info("spec reloaded", "file", sw.file, "title", title, "version", version, "sha256", digest(c.Raw), "took", time.Since(begin).Round(time.Millisecond))
	for _, w := range sw.mock.Warnings() {
		sw.logger.Warn("operation not served as the contract describes it", "detail", w)
	}
}

// specLike reports whether a file may be part of a spec: YAML or JSON. A
// store's file, an editor's swap file or a temporary file in the same
// directory is not; an editor's atomic save ends with a rename to the
// spec's own name, which is.
func specLike(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// digest is the SHA-256 of a document, in hex, as /healthz shows it.
func digest(doc []byte) string {
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:])
}
