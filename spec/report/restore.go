package report

import "fmt"

// A Changed is a record a run wrote to and left changed, as the list read
// after its last restore showed it: what a person must set back by hand,
// as every report and the console show it.
type Changed struct {
	Record string // the record, such as "petId 7"
	Found  string // its writable fields as listed at the end, such as "quantity 555"
	Wanted string // the same fields as they were before the run's first write to it
	Why    string // why the restore did not hold, such as "PATCH answered 500"; "": not known
}

// String renders c on one line, as every report shows it:
// "petId 7: found quantity 555; wanted quantity 7 — PATCH answered 500".
func (c Changed) String() string {
	s := fmt.Sprintf("%s: found %s; wanted %s", c.Record, c.Found, c.Wanted)
	if c.Why != "" {
		s += " — " + c.Why
	}
	return s
}

// LeftChangedTitle heads the list of records left changed in every report.
const LeftChangedTitle = "Left changed: set these records back by hand"

// leftChangedMessage says in a line how many records the run left changed.
func (r Run) leftChangedMessage() string {
	return fmt.Sprintf("the run left %s changed: set %s back by hand", Plural(int64(len(r.LeftChanged)), "record"), map[bool]string{true: "it", false: "them"}[len(r.LeftChanged) == 1])
}

// leftChangedLines renders the list, one line a record.
func (r Run) leftChangedLines() []string {
	out := make([]string, len(r.LeftChanged))
	for i, c := range r.LeftChanged {
		out[i] = c.String()
	}
	return out
}
