package main

import (
	"fmt"
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
// name other files (./schemas.yaml#/InventoryItem, relative to the spec's
// directory) is bundled first: each file's components are lifted into the
// document's, under their own names where they do not clash, so
// /openapi.yaml serves one document that needs no other file.
func readSpec(file string) ([]byte, error) {
	doc, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if !refersToFiles(doc) {
		return doc, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
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

// refersToFiles reports whether a document has a $ref to another file.
func refersToFiles(doc []byte) bool {
	for _, m := range fileRef.FindAllSubmatch(doc, -1) {
		if target := string(m[1]); !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
			return true
		}
	}
	return false
}

// loadSpecFile loads the contract in file, its referenced files bundled
// in.
func loadSpecFile(file string) (*spec.Contract, error) {
	doc, err := readSpec(file)
	if err != nil {
		return nil, err
	}
	return spec.Load(doc)
}
