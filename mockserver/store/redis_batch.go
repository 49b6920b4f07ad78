package store

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A batcher runs one script for many callers: the calls made while a
// pipeline is under way go together in the next one, so that concurrent
// writes cost one system call each way, not one each.
type batcher struct {
	client *redis.Client
	script *redis.Script

	mu     sync.Mutex // guards queue, closed, and sending on or closing wake
	queue  []*call
	closed bool

	wake    chan struct{} // capacity 1: the queue is not empty
	stopped chan struct{} // closed when the loop has ended
}

// A call is one run of the script.
type call struct {
	keys []string
	args []any
	res  []any
	err  error
	done chan struct{} // closed once res and err are set
}

func newBatcher(client *redis.Client, script *redis.Script) *batcher {
	b := &batcher{client: client, script: script, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go b.loop()
	return b
}

// do runs the script with keys and args in the next pipeline.
func (b *batcher) do(ctx context.Context, keys []string, args []any) ([]any, error) {
	c := &call{keys: keys, args: args, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("closed")
	}
	b.queue = append(b.queue, c)
	select {
	case b.wake <- struct{}{}:
	default:
	}
	b.mu.Unlock()
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loop sends the queue, a pipeline at a time, until close.
func (b *batcher) loop() {
	defer close(b.stopped)
	for range b.wake {
		for {
			b.mu.Lock()
			batch := b.queue
			b.queue = nil
			b.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			b.send(batch)
		}
	}
}

// send runs one pipeline of calls. A server that does not know the
// script (it restarted) gets it with the first call that fails so.
func (b *batcher) send(batch []*call) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	pipe := b.client.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		cmds[i] = b.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	pipe.Exec(ctx)
	for i, c := range batch {
		c.res, c.err = cmds[i].Slice()
		if c.err != nil && redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			c.res, c.err = b.script.Run(ctx, b.client, c.keys, c.args...).Slice()
		}
		close(c.done)
	}
}

// close ends the loop once what is queued is sent.
func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.wake)
	}
	b.mu.Unlock()
	<-b.stopped
}
