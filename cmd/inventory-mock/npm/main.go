// Command npm builds the npm packages of inventory-mock from a release's
// archives, as README.md beside this file says: one package per platform
// holding its binary, and @petstore/inventory-mock, whose launcher starts
// the binary of the platform package npm installed. Run it after
// goreleaser, from the repository's root:
//
//	go run ./cmd/inventory-mock/npm --dist dist --out dist/npm
//
// It reads dist/metadata.json for the version and the six inventory-mock
// archives, and writes one directory per package under --out, each ready
// for npm pack or npm publish.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// scope is the npm scope of every package; main is the package users install.
const (
	scope = "@petstore"
	main_ = scope + "/inventory-mock"
)

//go:embed inventory-mock.js
var launcher []byte

//go:embed README.md
var readme []byte

// A platform is one release build: Go's names for it and npm's.
type platform struct {
	goos, goarch string // linux, amd64
	os, cpu      string // npm's, as process.platform and process.arch say: linux, x64
}

// platforms are the release's builds (.goreleaser.yaml).
var platforms = []platform{
	{"linux", "amd64", "linux", "x64"},
	{"linux", "arm64", "linux", "arm64"},
	{"darwin", "amd64", "darwin", "x64"},
	{"darwin", "arm64", "darwin", "arm64"},
	{"windows", "amd64", "win32", "x64"},
	{"windows", "arm64", "win32", "arm64"},
}

// name is the platform package's name, as the launcher derives it.
func (p platform) name() string { return main_ + "-" + p.os + "-" + p.cpu }

// exe is the binary's file name.
func (p platform) exe() string {
	if p.goos == "windows" {
		return "inventory-mock.exe"
	}
	return "inventory-mock"
}

// archive is the release archive's file name (.goreleaser.yaml's name_template).
func (p platform) archive(version string) string {
	ext := ".tar.gz"
	if p.goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("inventory-mock_%s_%s_%s%s", version, p.goos, p.goarch, ext)
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "npm:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("npm", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "goreleaser's dist `DIR`, holding metadata.json and the archives")
	out := fs.String("out", "dist/npm", "`DIR` to write one directory per package into (emptied first)")
	only := fs.String("platforms", "", "comma-separated `GOOS/GOARCH` list to package (default: all six; the main package then lists only these)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ps []platform
	for _, p := range platforms {
		if *only == "" || strings.Contains(","+*only+",", ","+p.goos+"/"+p.goarch+",") {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return fmt.Errorf("--platforms %q names none of the release's platforms", *only)
	}
	dirs, err := build(*dist, *out, ps)
	for _, d := range dirs {
		fmt.Fprintln(stdout, d)
	}
	return err
}

// build writes the packages of the release in dist for the platforms ps
// into out, and returns their directories, the platforms' first: the order
// to publish them in.
func build(dist, out string, ps []platform) ([]string, error) {
	version, err := releaseVersion(dist)
	if err != nil {
		return nil, err
	}
	// The licence every archive carries.
	license, err := member(filepath.Join(dist, ps[0].archive(version)), "LICENSE")
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	var dirs []string
	optional := map[string]string{}
	for _, p := range ps {
		bin, err := member(filepath.Join(dist, p.archive(version)), p.exe())
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(out, "inventory-mock-"+p.os+"-"+p.cpu)
		pkg := manifest{
			Name:        p.name(),
			Version:     version,
			Description: fmt.Sprintf("The inventory-mock binary for %s %s; install %s, which uses it.", p.os, p.cpu, main_),
			License:     "Apache-2.0",
			Repository:  repository,
			OS:          []string{p.os},
			CPU:         []string{p.cpu},
			Files:       []string{"bin/" + p.exe()},
			// Signals to npm that the package must be unpacked, not run
			// from an archive (Yarn's PnP): it holds a binary.
			PreferUnplugged: true,
		}
		notice := fmt.Sprintf("# %s\n\nThe `inventory-mock` binary of the Pet Store Inventory contract kit for %s %s. Install [`%s`](https://www.npmjs.com/package/%s) instead: it installs this package on this platform and starts its binary.\n", p.name(), p.os, p.cpu, main_, main_)
		if err := write(dir, pkg, map[string][]byte{"LICENSE": license, "README.md": []byte(notice)}, map[string][]byte{"bin/" + p.exe(): bin}); err != nil {
			return nil, err
		}
		optional[p.name()] = version
		dirs = append(dirs, dir)
	}
	pkg := manifest{
		Name:                 main_,
		Version:              version,
		Description:          "A stateful mock of the Pet Store Inventory API, served from its OpenAPI contract: npx @petstore/inventory-mock",
		License:              "Apache-2.0",
		Repository:           repository,
		Keywords:             []string{"mock", "openapi", "contract-testing", "mock-server", "petstore"},
		Bin:                  map[string]string{"inventory-mock": "bin/inventory-mock.js"},
		Files:                []string{"bin/inventory-mock.js"},
		Engines:              map[string]string{"node": ">=18"},
		OptionalDependencies: optional,
	}
	dir := filepath.Join(out, "inventory-mock")
	if err := write(dir, pkg, map[string][]byte{"LICENSE": license, "README.md": readme}, map[string][]byte{"bin/inventory-mock.js": launcher}); err != nil {
		return nil, err
	}
	return append(dirs, dir), nil
}

// repository is every package's repository field.
var repository = map[string]string{"type": "git", "url": "git+https://github.com/petstore/inventory-kit.git"}

// A manifest is a package.json.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	License              string            `json:"license"`
	Repository           map[string]string `json:"repository"`
	Keywords             []string          `json:"keywords,omitempty"`
	Bin                  map[string]string `json:"bin,omitempty"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Files                []string          `json:"files"`
	Engines              map[string]string `json:"engines,omitempty"`
	PreferUnplugged      bool              `json:"preferUnplugged,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
}

// write writes a package's directory: package.json, the files, and the
// executables (mode 0755, which npm pack keeps).
func write(dir string, pkg manifest, files, executables map[string][]byte) error {
	j, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	files["package.json"] = append(j, '\n')
	for mode, set := range map[os.FileMode]map[string][]byte{0o644: files, 0o755: executables} {
		for name, b := range set {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, b, mode); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseVersion reads the version goreleaser wrote to dist/metadata.json:
// the tag without its v, or a snapshot's version.
func releaseVersion(dist string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		return "", fmt.Errorf("%w (run goreleaser first)", err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(b, &m); err != nil || m.Version == "" {
		return "", fmt.Errorf("%s holds no version: %v", filepath.Join(dist, "metadata.json"), err)
	}
	return m.Version, nil
}

// member returns the file named name from the .tar.gz or .zip archive at path.
func member(path, name string) ([]byte, error) {
	if strings.HasSuffix(path, ".zip") {
		z, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		b, err := fs.ReadFile(z, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s holds no %s", path, name)
		}
		return b, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no %s", path, name)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}
