// Command stamp writes the SHA-256 of the document a generated client was
// made from into the client's header, so a test can tell when the client
// is older than the document:
//
//	stamp ../../spec/openapi.yaml client_gen_test.go
//
// It runs after oapi-codegen, from the go:generate lines in strict_test.go.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Prefix starts the stamp line; the hash follows it.
const Prefix = "// Generated from spec/openapi.yaml with SHA-256 "

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: stamp DOCUMENT GENERATED_FILE")
		os.Exit(2)
	}
	if err := stamp(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "stamp:", err)
		os.Exit(1)
	}
}

// stamp puts the document's hash on the lines after the generated file's
// "Code generated" line, replacing an older stamp.
func stamp(document, generated string) error {
	doc, err := os.ReadFile(document)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(generated)
	if err != nil {
		return err
	}
	src = old.ReplaceAll(src, nil)
	i := bytes.Index(src, []byte("// Code generated "))
	if i < 0 {
		return fmt.Errorf("%s has no \"// Code generated\" line", filepath.Base(generated))
	}
	i += bytes.IndexByte(src[i:], '\n') + 1
	sum := sha256.Sum256(doc)
	line := "//\n" + Prefix + hex.EncodeToString(sum[:]) + ".\n"
	out := append(append(append([]byte{}, src[:i]...), line...), src[i:]...)
	return os.WriteFile(generated, out, 0o644)
}

// old matches a stamp already there.
var old = regexp.MustCompile(`(?m)^//\n` + regexp.QuoteMeta(Prefix) + `[0-9a-f]*\.\n`)
