package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// Reload puts the contract c in force in place of the one the mock
// serves, without a restart and without losing state: the store, the
// sessions, the journal, the chaos rules and the rate limit stay as they
// are. c is checked as New checks a contract, and every record the store
// holds (and those the default session started with, under
// Config.Reloadable) must be a record of c's record schema as c serves it;
// if anything fails, the contract in force keeps serving and Reload says
// why. The new view is built whole, then swapped in atomically: a request
// in flight finishes with the contract it started with. How records made
// under one contract are served under another is in README.md ("Spec hot
// reload"); the record's key field cannot change.
func (s *Server) Reload(ctx context.Context, c *spec.Contract) (err error) {
	s.reloads.Lock()
	defer s.reloads.Unlock()
	if s.metrics != nil {
		defer func() { s.metrics.Reload(err == nil) }()
	}
	cur := s.live.Load()
	shape, err := fixtures.NewShape(c)
	if err != nil {
		return err
	}
	if shape.Key != cur.base.Key {
		return fmt.Errorf("the record's key would change from %s to %s: the store keeps records by their key; restart the mock to serve this contract", cur.base.Key, shape.Key)
	}
	if err := httpapi.CheckEnvelope(c); err != nil {
		return err
	}
	v := *cur
	v.contract, v.shape = c, shape
	v.fields = maps.Clone(cur.fields)
	for _, name := range shape.Fields {
		v.fields[name] = true
	}
	if v.reshape, err = newReshaper(v.fields, cur.base, shape); err != nil {
		return err
	}
	if err := v.build(); err != nil {
		return err
	}
	if err := v.checkRecords(ctx); err != nil {
		return err
	}
	s.chaos.use(c)
	s.live.Store(&v)
	go v.admin()
	return nil
}

// checkRecords checks that every record the store holds, and the
// default session's records at start-up, is a record of the view's shape
// as the view serves it. The first that is not is the error.
func (s *Server) checkRecords(ctx context.Context) error {
	check := func(where string, l store.List) error {
		for raw := range l.All() {
			served := s.reshape.record(raw)
			v, err := spec.DecodeJSON(served)
			if err != nil {
				return fmt.Errorf("%s: a stored record is not JSON: %v", where, err)
			}
			if _, ps := s.shape.Make(v); len(ps) > 0 {
				m, _ := v.(map[string]any)
				return fmt.Errorf("%s: the record with %s %s does not fit %s as the new contract serves it: %s", where, s.shape.Key, spec.AppendJSON(nil, m[s.shape.Key]), s.shape.Schema.Name, spec.Join(ps))
			}
		}
		return nil
	}
	if s.seed != nil {
		if err := check("the records the mock started with", *s.seed); err != nil {
			return err
		}
	}
	sessions, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	names := []string{store.DefaultSession}
	for _, si := range sessions {
		if si.Name != store.DefaultSession {
			names = append(names, si.Name)
		}
	}
	for _, name := range names {
		l, err := s.store.List(ctx, name)
		if err != nil {
			return err
		}
		if err := check(fmt.Sprintf("session %s", name), l); err != nil {
			return err
		}
	}
	return nil
}

// A reshaper serves stored records as a contract other than the one they
// were made with shapes them: the fields its record schema has, in its
// order, with the default of a required field a record lacks. A nil
// reshaper serves records as they are stored.
type reshaper struct {
	shape    *fixtures.Shape
	defaults map[string][]byte // the JSON default of each required field a stored record may lack
}

// newReshaper returns how shape serves records that may hold any of
// fields (every field of a record schema in force since start-up) and
// were first made with base; nil where they need no change.
func newReshaper(fields map[string]bool, base, shape *fixtures.Shape) (*reshaper, error) {
	p := &reshaper{shape: shape, defaults: map[string][]byte{}}
	need := false
	for name := range fields {
		if !shape.Has(name) {
			need = true
		}
	}
	for _, f := range shape.Record.Fields {
		if bf := base.Record.Field(f.Name); !f.Required || bf != nil && bf.Required || f.Schema == nil || f.Schema.Model == nil || f.Schema.Model.Default == nil {
			continue
		}
		var v any
		if err := f.Schema.Model.Default.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s.%s: its default cannot be read: %v", shape.Schema.Name, f.Name, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: its default is not a JSON value: %v", shape.Schema.Name, f.Name, err)
		}
		p.defaults[f.Name] = b
		need = true
	}
	if !need {
		return nil, nil
	}
	return p, nil
}

// record returns raw as the reshaper serves it; raw itself where p is nil
// or raw is not a JSON object (which the store never holds).
func (p *reshaper) record(raw []byte) []byte {
	if p == nil {
		return raw
	}
	values := make(map[string][]byte, len(p.shape.Fields))
	if err := spec.Members(raw, func(name, v []byte) bool {
		if p.shape.Has(string(name)) {
			values[string(name)] = v
		}
		return true
	}); err != nil {
		return raw
	}
	b := make([]byte, 0, len(raw)+16)
	b = append(b, '{')
	for _, name := range p.shape.Fields {
		v, ok := values[name]
		if !ok {
			if v, ok = p.defaults[name]; !ok {
				continue
			}
		}
		b = appendMember(b, name, v)
	}
	return append(b, '}')
}

// stored returns rec as the reshaper serves it, a record again.
func (p *reshaper) stored(rec fixtures.Record) fixtures.Record {
	if p == nil {
		return rec
	}
	return fixtures.Record{ID: rec.ID, JSON: p.record(rec.JSON)}
}

// write returns what a write under the reshaper's contract stores: rec,
// made by that contract from old as it serves it, with the fields of old
// that contract does not have, kept unserved so that reverting the edit
// brings them back.
func (p *reshaper) write(old, rec fixtures.Record) fixtures.Record {
	if p == nil {
		return rec
	}
	b := rec.JSON[: len(rec.JSON)-1 : len(rec.JSON)-1] // without its '}'; appending copies
	kept := false
	spec.Members(old.JSON, func(name, v []byte) bool {
		if !p.shape.Has(string(name)) {
			b, kept = appendMember(b, string(name), v), true
		}
		return true
	})
	if !kept {
		return rec
	}
	return fixtures.Record{ID: rec.ID, JSON: append(b, '}')}
}

// appendMember appends the member name: v to the JSON object b has begun,
// after a comma unless it is the first.
func appendMember(b []byte, name string, v []byte) []byte {
	if len(b) > 1 {
		b = append(b, ',')
	}
	return append(append(spec.AppendString(b, name), ':'), v...)
}

// list returns the JSON array of l's records as the reshaper serves them,
// followed by a newline, as List.WriteTo writes it.
func (p *reshaper) list(l store.List) []byte {
	b := make([]byte, 0, l.Size()+16)
	b = append(b, '[')
	for raw := range l.All() {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, p.record(raw)...)
	}
	return append(b, "]\n"...)
}

// A counted store counts its engine's failures in m: every error but a
// missing record, a write the record's rules refuse, and a client that
// went away.
type counted struct {
	store.Store
	m *metrics.Metrics
}

func (c *counted) count(method string, err error) error {
	var ps problems
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.As(err, &ps) && !errors.Is(err, context.Canceled) {
		c.m.StoreError(method)
	}
	return err
}

func (c *counted) List(ctx context.Context, session string) (store.List, error) {
	l, err := c.Store.List(ctx, session)
	return l, c.count("list", err)
}

func (c *counted) Get(ctx context.Context, session string, id int64) (fixtures.Record, error) {
	r, err := c.Store.Get(ctx, session, id)
	return r, c.count("get", err)
}

func (c *counted) Update(ctx context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	r, err := c.Store.Update(ctx, session, id, change)
	return r, c.count("update", err)
}

func (c *counted) Reset(ctx context.Context, session string) error {
	return c.count("reset", c.Store.Reset(ctx, session))
}

func (c *counted) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	s, err := c.Store.Sessions(ctx)
	return s, c.count("sessions", err)
}

func (c *counted) Drop(ctx context.Context, session string) error {
	return c.count("drop", c.Store.Drop(ctx, session))
}

func (c *counted) Health(ctx context.Context) error { return c.count("health", c.Store.Health(ctx)) }
