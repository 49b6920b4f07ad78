package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// chaosOf reads the --latency and --fault rules.
func chaosOf(o *options) (mockserver.Chaos, error) {
	c := mockserver.Chaos{Seed: o.ChaosSeed}
	for i, v := range slices.Concat(o.Latency, o.Fault) {
		parse := mockserver.ParseFaultFlag
		if i < len(o.Latency) {
			parse = mockserver.ParseLatencyFlag
		}
		r, err := parse(v)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	return c, nil
}

// data is what the mock serves.
type data struct {
	contract *spec.Contract
	shape    *fixtures.Shape
	records  []fixtures.Record
	source   string   // where the records came from, for messages
	unknown  []string // fixture fields the record schema does not have, left out
}

// loadContract loads --spec (readSpec), or the embedded contract.
func loadContract(o *options) (*spec.Contract, error) {
	file := o.Spec
	if file == "" {
		return spec.Shared()
	}
	doc, err := readSpec(file, o.SpecRefsOutside)
	var c *spec.Contract
	if err == nil {
		c, err = spec.Load(doc)
	}
	var named *fs.PathError // its message names the file already
	switch {
	case errors.As(err, &named):
		return nil, fmt.Errorf("--spec: %w", err)
	case err != nil:
		return nil, fmt.Errorf("--spec %s: %w", file, err)
	}
	return c, nil
}

// load reads the contract and the data set the options name, checked
// against the record schema and the mock's own bounds.
func load(ctx context.Context, o *options) (*data, error) {
	contract, err := loadContract(o)
	if err != nil {
		return nil, err
	}
	shape, err := fixtures.NewShape(contract)
	if err != nil {
		return nil, err
	}
	d := &data{contract: contract, shape: shape}
	switch {
	case o.Generate > 0:
		d.source = fmt.Sprintf("generated (--generate %d --seed %d)", o.Generate, o.Seed) // the flags, right for 1 pet and for 64
		d.records, err = fixtures.Generate(shape, o.Generate, o.Seed)
	case o.Staging.FixturesFrom != "":
		var up *upstream
		if up, err = newUpstream(o); err == nil {
			restore := collectOften()
			d.records, d.unknown, d.source, err = up.records(ctx, shape)
			restore()
		}
	case o.Fixtures != "":
		d.source = o.Fixtures
		raw, rerr := os.ReadFile(o.Fixtures)
		if rerr != nil {
			return nil, fmt.Errorf("--fixtures: %w", rerr)
		}
		d.records, d.unknown, err = fixtures.Load(o.Fixtures, raw, shape)
	default:
		d.source = fixtures.DefaultName + " (embedded)"
		if d.records, d.unknown, err = fixtures.Default(shape); err != nil {
			// The embedded fixtures, written for the embedded contract,
			// under a --spec whose record has changed.
			return nil, fmt.Errorf("%w; the embedded fixtures do not fit the record schema %s of --spec: serve generated pets of its shape with --generate N, or records that fit with --fixtures FILE", err, shape.Schema.Name)
		}
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// smallDataSet is the largest number of pets for which tuneGC trades memory
// for speed.
const smallDataSet = 100_000

// tuneGC tunes the collector to the data set. A small one (up to
// smallDataSet pets) lets the heap grow to five times the live data
// before a collection (GOGC=400): the live heap is a few MiB, and request
// validation allocates enough that collections would cost the mock a
// third of its time under load; resident memory grows by about 10 MiB. A
// large one gets a soft memory limit of three times its encoded records,
// and at least minMemoryLimit: a session that has written to every record
// holds a second copy of them beside the fixtures, and Go's default pacing
// would let the heap reach twice that again. GOGC and GOMEMLIMIT set by
// the user win.
func tuneGC(lookupEnv func(string) (string, bool), pets, dataBytes int) {
	if pets <= smallDataSet {
		if gogc, _ := lookupEnv("GOGC"); gogc == "" {
			debug.SetGCPercent(400)
		}
		return
	}
	if limit, _ := lookupEnv("GOMEMLIMIT"); limit == "" {
		debug.SetMemoryLimit(max(minMemoryLimit, 3*int64(dataBytes)))
	}
}

// loadGCPercent is the collector's GOGC while a --fixtures-from list is
// read: each record read leaves its decoded form behind, and Go's default
// (100) would let that garbage reach the size of the records kept. With a
// million pets the peak resident memory is about 230 MB at 25, against
// about 310 MB at 100, for a load a little slower.
const loadGCPercent = 25

// collectOften sets the collector to loadGCPercent, unless GOGC is set,
// and returns what puts it back.
func collectOften() (restore func()) {
	if v, _ := os.LookupEnv("GOGC"); v != "" {
		return func() {}
	}
	old := debug.SetGCPercent(loadGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// minMemoryLimit is the least soft memory limit tuneGC sets.
const minMemoryLimit = 200 << 20

// recordBytes is the size of the records as the store keeps them: their
// encodings and their keys.
func recordBytes(records []fixtures.Record) int {
	n := 0
	for _, r := range records {
		n += len(r.JSON) + 1 + 8
	}
	return n
}

// settle hands back to the system the memory that loading a large data
// set used and no longer needs: generating or reading a million pets
// leaves more garbage than the records themselves take, which the runtime
// would otherwise keep for minutes.
func settle(pets int) {
	if pets > smallDataSet {
		debug.FreeOSMemory()
	}
}
