package conformance

import (
	"slices"

	"github.com/onsi/ginkgo/v2"
)

// An Area is the part of the contract a check covers. It is the check's
// first label, selects it with --label-filter, and names its classname in
// the JUnit report.
type Area string

// The areas, in the order reports list them.
const (
	AreaAuth        Area = "auth"
	AreaList        Area = "list"
	AreaUpdate      Area = "update"
	AreaBadInput    Area = "bad-input"
	AreaErrors      Area = "errors"
	AreaResponses   Area = "responses"
	AreaOperations  Area = "operations"
	AreaConcurrency Area = "concurrency"
	AreaSilent      Area = "silent"
	AreaExplore     Area = "explore"
)

var areas = []Area{AreaAuth, AreaList, AreaUpdate, AreaBadInput, AreaErrors, AreaResponses, AreaOperations, AreaConcurrency, AreaSilent, AreaExplore}

// A Trait is a further property of a check, also a label.
type Trait string

// The traits.
const (
	Mutating    Trait = "mutating"    // writes: runs only with --allow-mutations, restores what it changes
	KeyInURL    Trait = "key-in-url"  // puts the key in a URL, where access logs may keep it
	Deprecated  Trait = "deprecated"  // calls an operation the contract marks deprecated
	Observation Trait = "observation" // records what the target chose where the contract is silent
	RFC         Trait = "rfc"         // what only HTTP's RFCs require: a warning, a failure with --strict
)

// Labels returns the Ginkgo labels of a check in area a with traits ts.
func Labels(a Area, ts ...Trait) ginkgo.Labels {
	l := ginkgo.Labels{string(a)}
	for _, t := range ts {
		l = append(l, string(t))
	}
	return l
}

// areaOf returns the area among a check's labels, AreaSilent if none.
func areaOf(labels []string) Area {
	for _, l := range labels {
		if slices.Contains(areas, Area(l)) {
			return Area(l)
		}
	}
	return AreaSilent
}

// In reports whether labels carry trait t.
func (t Trait) In(labels []string) bool { return slices.Contains(labels, string(t)) }
