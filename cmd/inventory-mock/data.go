package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// chaosOf reads the --latency and --fault rules.
func chaosOf(o *options) (mockserver.Chaos, error) {
	c := mockserver.Chaos{Seed: o.chaosSeed}
	for _, v := range o.latency {
		r, err := mockserver.ParseLatencyFlag(v)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	for _, v := range o.fault {
		r, err := mockserver.ParseFaultFlag(v)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	return c, nil
}

// data is what the mock serves: the contract, what a record is, and the
// records, checked against the one set of rules.
type data struct {
	contract *spec.Contract
	shape    *fixtures.Shape
	records  []fixtures.Record
	source   string   // where the records came from, for messages
	unknown  []string // fixture fields the record schema does not have, left out
}

// loadContract loads the document in file, or the embedded contract (once
// per process) where file is empty.
func loadContract(file string) (*spec.Contract, error) {
	if file == "" {
		return spec.Shared()
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return spec.Load(doc)
}

// load reads the contract and the data set the options name. Every data
// source, embedded, a file or generated, is checked against the record
// schema and the mock's own bounds; a failure names the source.
func load(o *options) (*data, error) {
	contract, err := loadContract(o.specFile)
	if err != nil {
		return nil, err
	}
	shape, err := fixtures.NewShape(contract)
	if err != nil {
		return nil, err
	}
	d := &data{contract: contract, shape: shape}
	switch {
	case o.generate > 0:
		d.source = fmt.Sprintf("generated (%d pets, seed %d)", o.generate, o.seed)
		d.records, err = fixtures.Generate(shape, o.generate, o.seed)
	case o.fixturesFile != "":
		d.source = o.fixturesFile
		var raw []byte
		if raw, err = os.ReadFile(o.fixturesFile); err == nil {
			d.records, d.unknown, err = fixtures.Load(o.fixturesFile, raw, shape)
		}
	default:
		d.source = fixtures.DefaultName + " (embedded)"
		d.records, d.unknown, err = fixtures.Default(shape)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// smallDataSet is the largest number of pets for which tuneGC trades memory
// for speed.
const smallDataSet = 100_000

// tuneGC lets the heap grow to five times the live data before a
// collection (GOGC=400) when the data set is small: the live heap is then a
// few MiB, and request validation allocates enough that collections cost
// the mock a third of its time under load. Resident memory grows by about
// 10 MiB. A GOGC set by the user, or a large data set, keeps Go's default.
func tuneGC(lookupEnv func(string) (string, bool), pets int) {
	if gogc, _ := lookupEnv("GOGC"); gogc == "" && pets <= smallDataSet {
		debug.SetGCPercent(400)
	}
}
