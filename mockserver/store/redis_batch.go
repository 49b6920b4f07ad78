package store

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A batcher runs one script for many callers: the calls made while
// pipelines are under way go together in the next one. Up to maxInFlight
// pipelines are under way at once, on connections of their own: a Redis
// that syncs every write syncs once for all it read during its last sync,
// so a pipeline sent meanwhile shares the next sync instead of paying one.
type batcher struct {
	client  *redis.Client
	script  *redis.Script
	calls   *queue[*call]
	slots   chan struct{} // capacity maxInFlight: a token per pipeline under way
	sending sync.WaitGroup
	stopped chan struct{} // closed when the loop and every pipeline have ended
}

// maxInFlight bounds the pipelines of one batcher under way at once.
const maxInFlight = 4

// A call is one run of the script.
type call struct {
	keys []string
	args []any
	res  []any
	err  error
	done chan struct{} // closed once res and err are set
}

func newBatcher(client *redis.Client, script *redis.Script) *batcher {
	b := &batcher{client: client, script: script, calls: newQueue[*call](), slots: make(chan struct{}, maxInFlight), stopped: make(chan struct{})}
	go b.loop()
	return b
}

// do runs the script with keys and args in the next pipeline.
func (b *batcher) do(ctx context.Context, keys []string, args []any) ([]any, error) {
	c := &call{keys: keys, args: args, done: make(chan struct{})}
	if !b.calls.push(c) {
		return nil, errors.New("closed")
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loop sends the queue, up to maxInFlight pipelines at once, until close.
// It takes a slot before it takes the queue: while every slot is busy, the
// calls that arrive wait in the queue and go together.
func (b *batcher) loop() {
	defer close(b.stopped)
	defer b.sending.Wait()
	for range b.calls.wake {
		for {
			b.slots <- struct{}{}
			batch := b.calls.take(math.MaxInt)
			if len(batch) == 0 {
				<-b.slots
				break
			}
			b.sending.Add(1)
			go func() {
				defer b.sending.Done()
				b.send(batch)
				<-b.slots
			}()
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
	b.calls.close()
	<-b.stopped
}
