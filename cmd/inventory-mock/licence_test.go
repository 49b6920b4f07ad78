package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// allowedLicences are the licences a module the release binaries link may
// have: each allows redistribution in a binary, with its notice. (MPL-2.0
// does too, for files kept unmodified; its source stays available from the
// module's own release.)
var allowedLicences = []string{"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MIT", "MPL-2.0"}

// classifyLicence names the licence of a licence file's text by phrases
// each licence's text has and the others lack; "" for a text it does not
// know. The MPL-2.0 is named first, as its text names the GNU licences (as
// its "Secondary Licenses"); then a GNU licence anywhere in the file, so
// that a file that adds the GPL to another licence is not read as the
// other one.
func classifyLicence(text string) string {
	t := strings.Join(strings.Fields(text), " ") // one space for every run of white space
	has := func(phrases ...string) bool {
		for _, p := range phrases {
			if !strings.Contains(strings.ToLower(t), strings.ToLower(p)) {
				return false
			}
		}
		return true
	}
	switch {
	case has("Mozilla Public License Version 2.0"), has("Mozilla Public License, version 2.0"):
		return "MPL-2.0"
	case has("GNU Affero General Public License"):
		return "AGPL"
	case has("GNU Lesser General Public License"), has("GNU Library General Public License"):
		return "LGPL"
	case has("GNU General Public License"):
		return "GPL"
	case has("Apache License", "Version 2.0"):
		return "Apache-2.0"
	case has("Permission is hereby granted, free of charge, to any person obtaining a copy"):
		return "MIT"
	case has("Permission to use, copy, modify, and", "distribute this software for any purpose with or without fee"):
		return "ISC"
	case has("Redistribution and use in source and binary forms", "Neither the name"),
		has("Redistribution and use in source and binary forms", "names of its contributors may be used"):
		return "BSD-3-Clause"
	case has("Redistribution and use in source and binary forms"):
		return "BSD-2-Clause"
	}
	return ""
}

// TestClassifyLicence: each licence is told by its own text, and a GNU
// licence or a text it does not know is never taken for an allowed one.
func TestClassifyLicence(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ text, want string }{
		{string(b), "Apache-2.0"},
		{"Permission is hereby granted, free of charge, to any person obtaining a copy\nof this software", "MIT"},
		{"Redistribution and use in source and binary forms, with or without\nmodification, are permitted ... Neither the name of Google Inc. nor", "BSD-3-Clause"},
		{"Redistribution and use in source and binary forms, with or without modification, are permitted provided that", "BSD-2-Clause"},
		{"Permission to use, copy, modify, and/or distribute this software for any\npurpose with or without fee is hereby granted", "ISC"},
		{"Mozilla Public License Version 2.0\n==================================", "MPL-2.0"},
		{"Mozilla Public License Version 2.0\n... means either the GNU General Public License, Version 2.0, the GNU Lesser General Public License, Version 2.1, the GNU Affero General Public License, Version 3.0", "MPL-2.0"},
		{"GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007", "GPL"},
		{"GNU LESSER GENERAL PUBLIC LICENSE", "LGPL"},
		{"GNU AFFERO GENERAL PUBLIC LICENSE", "AGPL"},
		{"Permission is hereby granted, free of charge, to any person obtaining a copy ... or, at your option, the GNU General Public License", "GPL"},
		{"All rights reserved. Do not copy.", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := classifyLicence(tt.text); got != tt.want {
			t.Errorf("classifyLicence(%.60q) = %q; want %q", tt.text, got, tt.want)
		}
	}
}

// licenceFile matches the names modules give their licence files:
// LICENSE, LICENSE.md, LICENCE.txt, COPYING, License, ...
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying)([.-].*)?$`)

// TestLicences lists every module the release binaries link, on each of the
// release's systems, with the licence its licence file holds, and fails for
// a module without one, or with one not in allowedLicences. go test -v
// -run TestLicences ./cmd/inventory-mock prints the list. The kit's own
// LICENSE must be Apache-2.0, and the standard library's is Go's BSD-3-Clause.
func TestLicences(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the binaries' dependencies")
	}
	own, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatalf("the kit has no LICENSE: %v", err)
	}
	if got := classifyLicence(string(own)); got != "Apache-2.0" {
		t.Errorf("LICENSE is %q; want Apache-2.0", got)
	}
	type module struct {
		Path, Version, Dir string
		Main               bool
		Replace            *module
	}
	modules := map[string]module{} // path@version: the module
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Module", "./cmd/inventory-mock", "./cmd/inventory-conformance")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, &stderr)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Standard   bool
				Module     *module
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if p.Standard || p.Module == nil || p.Module.Main {
				continue
			}
			m := *p.Module
			if m.Replace != nil {
				m = *m.Replace
			}
			modules[m.Path+"@"+m.Version] = m
		}
	}
	if len(modules) < 5 {
		t.Fatalf("go list found %d modules; the binaries link more (libopenapi, its validator, ...)", len(modules))
	}
	keys := make([]string, 0, len(modules))
	for k := range modules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var list strings.Builder
	for _, k := range keys {
		m := modules[k]
		if m.Dir == "" {
			t.Errorf("%s: not in the module cache (go mod download)", k)
			continue
		}
		entries, err := os.ReadDir(m.Dir)
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		var found []string
		for _, e := range entries {
			if e.Type().IsRegular() && licenceFile.MatchString(e.Name()) {
				b, err := os.ReadFile(filepath.Join(m.Dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				l := classifyLicence(string(b))
				found = append(found, e.Name()+": "+l)
				if !slices.Contains(allowedLicences, l) {
					t.Errorf("%s: %s is %q; want one of %v", k, e.Name(), l, allowedLicences)
				}
			}
		}
		if len(found) == 0 {
			t.Errorf("%s has no licence file at its root (%s)", k, m.Dir)
		}
		list.WriteString("  " + k + "  " + strings.Join(found, ", ") + "\n")
	}
	t.Logf("the modules inventory-mock and inventory-conformance link (linux, darwin, windows), and their licences:\n%s  Go's standard library  BSD-3-Clause", &list)
}
