package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pb33f/libopenapi/bundler"
	"github.com/pb33f/libopenapi/datamodel"

	"github.com/petstore/inventory-kit/spec"
)

// fileRef finds a $ref to another file: a value that does not start with
// '#', in YAML or JSON.
var fileRef = regexp.MustCompile(`(?m)["']?\$ref["']?\s*:\s*["']?([^"'#\s{}][^"'\s{}]*)`)

// readSpec reads the spec in file as one document. A spec whose $refs
// name other files (./schemas.yaml#/InventoryItem, relative to the
// referring file's directory) is bundled first: each file's components
// are lifted into the document's, under their own names where they do not
// clash, so /openapi.yaml serves one document that needs no other file.
//
// Every file the spec names, directly or through another, must be in the
// spec's folder or below, unless outside is set (--spec-refs-outside):
// what the spec pulls in is served at /openapi.yaml to anyone. The spec
// and its files together may have spec.MaxDocument bytes.
func readSpec(file string, outside bool) ([]byte, error) {
	doc, err := readBounded(file, spec.MaxDocument)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	switch files, err := checkRefs(abs, doc, outside); {
	case err != nil:
		return nil, err
	case !files:
		return doc, nil
	}
	cfg := &datamodel.DocumentConfiguration{
		BasePath:            filepath.Dir(abs),
		SpecFilePath:        filepath.Base(abs),
		AllowFileReferences: true,
		Logger:              slog.New(slog.DiscardHandler),
	}
	out, err := bundler.BundleBytesComposed(doc, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("spec: %s: its $refs to other files cannot be resolved: %w", file, err)
	}
	return out, nil
}

// errTooLarge is a spec, with the files it refers to, of more bytes than
// the mock loads.
var errTooLarge = fmt.Errorf("spec: more than the %d MiB the mock loads in one document, its referenced files included", spec.MaxDocument>>20)

// readBounded reads file, refusing one of more than max bytes.
func readBounded(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errTooLarge
	}
	return b, nil
}

// checkRefs follows the $refs to files from the spec at abs (its text
// doc), and from the files they name, and checks that each is in the
// spec's folder or below (unless outside) and that all of them together
// stay within spec.MaxDocument bytes. It reports whether doc refers to
// another file at all.
func checkRefs(abs string, doc []byte, outside bool) (files bool, err error) {
	root := filepath.Dir(abs)
	total := int64(len(doc))
	seen := map[string]bool{abs: true}
	type file struct {
		path string
		text []byte
	}
	queue := []file{{abs, doc}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, m := range fileRef.FindAllSubmatch(cur.text, -1) {
			target, _, _ := strings.Cut(string(m[1]), "#")
			if target == "" || strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
				continue
			}
			files = true
			path := filepath.Clean(filepath.Join(filepath.Dir(cur.path), filepath.FromSlash(target)))
			if filepath.IsAbs(target) {
				path = filepath.Clean(target)
			}
			if seen[path] {
				continue
			}
			seen[path] = true
			if rel, err := filepath.Rel(root, path); !outside && (err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
				return false, fmt.Errorf("spec: %s refers to %s, outside the spec's folder %s; what a spec refers to is served at /openapi.yaml: move it into the folder, or allow it with --spec-refs-outside", filepath.Base(cur.path), target, root)
			}
			text, err := readBounded(path, spec.MaxDocument-total)
			if errors.Is(err, errTooLarge) {
				return false, err
			} else if err != nil {
				continue // the bundler says which $ref cannot be resolved
			}
			total += int64(len(text))
			queue = append(queue, file{path, text})
		}
	}
	return files, nil
}
