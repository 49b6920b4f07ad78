//go:build unix

package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The release's commands and platforms (.goreleaser.yaml): 12 archives.
var (
	releaseCommands  = []string{"inventory-mock", "inventory-conformance"}
	releasePlatforms = [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"}}
)

// releaseArchive is an archive's file name (.goreleaser.yaml's name_template).
func releaseArchive(command, version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", command, version, goos, goarch, ext)
}

// archiveFiles returns the files of a .tar.gz or .zip archive by name.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		z, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		for _, f := range z.File {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name], err = io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		return files
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRelease checks .goreleaser.yaml and what it builds: goreleaser check
// passes; the snapshot release holds the 12 archives, each with its
// binary, LICENSE and README.md, a checksums file that matches them, and
// a CycloneDX SBOM per archive listing the modules the binary links. Then
// it runs this machine's archives: --version prints the release's version,
// the mock serves the contract on a free port, and the suite passes
// against it. The release is $INVENTORY_RELEASE_DIST where set (.ci/run
// builds it once); else the test runs goreleaser release --snapshot
// --clean itself, into the repository's dist/. Without goreleaser (and
// cyclonedx-gomod, which the SBOMs need) it skips;
// INVENTORY_REQUIRE_GORELEASER=1 makes that a failure.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release")
	}
	dist := os.Getenv("INVENTORY_RELEASE_DIST")
	tools := []string{"goreleaser"}
	if dist == "" {
		tools = append(tools, "cyclonedx-gomod")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, "INVENTORY_REQUIRE_GORELEASER", tool+" is not installed (go install github.com/goreleaser/goreleaser/v2@v2.15.1 github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0)")
		}
	}
	goreleaser := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "goreleaser", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("goreleaser %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goreleaser("check")
	sboms := true
	if dist == "" {
		// cyclonedx-gomod reads the kit's version with go-git, which
		// cannot read a worktree of git worktree add (.git a file there).
		if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
			t.Log("a git worktree: the release is built without SBOMs, which cyclonedx-gomod cannot make here (a clone can)")
			sboms = false
			goreleaser("release", "--snapshot", "--clean", "--skip=sbom")
		} else {
			goreleaser("release", "--snapshot", "--clean")
		}
		dist = filepath.Join(root, "dist")
	}

	var meta struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(dist, "metadata.json")); err != nil || json.Unmarshal(b, &meta) != nil || meta.Version == "" {
		t.Fatalf("%s/metadata.json gives no version: %v", dist, err)
	}
	version := meta.Version

	// checksums.txt: "<sha256>  <file>" for every archive and SBOM.
	sums := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt line %q; want <sha256>  <file>", l)
		}
		sums[name] = sum
	}
	var archives []string
	for _, command := range releaseCommands {
		for _, p := range releasePlatforms {
			name := releaseArchive(command, version, p[0], p[1])
			archives = append(archives, name)
			path := filepath.Join(dist, name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("the release has no %s", name)
				continue
			}
			if h := sha256.Sum256(data); sums[name] != hex.EncodeToString(h[:]) {
				t.Errorf("checksums.txt gives %s %q; its sha256 is %x", name, sums[name], h)
			}
			bin := command
			if p[0] == "windows" {
				bin += ".exe"
			}
			var names []string
			for n := range archiveFiles(t, path) {
				names = append(names, n)
			}
			slices.Sort(names)
			if want := []string{"LICENSE", "README.md", bin}; !slices.Equal(names, want) {
				t.Errorf("%s holds %v; want %v", name, names, want)
			}
			if sboms {
				checkSBOM(t, filepath.Join(dist, name+".cdx.json"), command, p[0], p[1])
			}
		}
	}
	var listed []string
	for name := range sums {
		if strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".zip") {
			listed = append(listed, name)
		}
	}
	slices.Sort(listed)
	slices.Sort(archives)
	if !slices.Equal(listed, archives) {
		t.Errorf("checksums.txt lists the archives %v; want the 12: %v", listed, archives)
	}
	if t.Failed() {
		return
	}

	// This machine's archives, unpacked and run.
	if !slices.Contains(releasePlatforms, [2]string{runtime.GOOS, runtime.GOARCH}) {
		t.Skipf("the release has no build for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}
	bin := map[string]string{}
	for _, command := range releaseCommands {
		dir := t.TempDir()
		files := archiveFiles(t, filepath.Join(dist, releaseArchive(command, version, runtime.GOOS, runtime.GOARCH)))
		bin[command] = filepath.Join(dir, command)
		if err := os.WriteFile(bin[command], files[command], 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin[command], "--version").Output()
		if want := command + " " + version + "\n"; err != nil || string(out) != want {
			t.Errorf("%s --version = %q, %v; want %q", command, out, err, want)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs syncBuffer
	mock := exec.Command(bin["inventory-mock"], "--addr", addr)
	mock.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "INVENTORY_") })
	mock.Stdout, mock.Stderr = &logs, &logs
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- mock.Wait() }()
	defer mock.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the mock ended before serving: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mock did not serve in 30 s:\n%s", logs.String())
		}
	}
	if status, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key"); status != 200 || !strings.HasPrefix(body, "[") {
		t.Errorf("GET /v1/inventory = %d %.100s; want 200 and the pets", status, body)
	}
	suite := exec.Command(bin["inventory-conformance"], "--base-url", "http://"+addr+"/v1", "--allow-mutations", "--explore-time", "2s")
	suite.Env = append(slices.Clone(mock.Env), "INVENTORY_API_KEY=inventory-dev-key")
	out, err := suite.CombinedOutput()
	if code := processStatus(t, err); code != 0 {
		t.Errorf("the suite against the release's mock: exit %d; want 0\n%s", code, out)
	}
	mock.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the mock's exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the mock still ran 30 s after SIGTERM")
	}
}

// checkSBOM checks that path is a CycloneDX JSON document of the command
// named command built for goos/goarch, listing the modules it links: the
// contract's parser among them.
func checkSBOM(t *testing.T, path, command, goos, goarch string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no SBOM: %v", err)
		return
	}
	var sbom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Purl string }
		}
		Components []struct{ Name, Version string }
	}
	if err := json.Unmarshal(b, &sbom); err != nil || sbom.BOMFormat != "CycloneDX" {
		t.Errorf("%s is not CycloneDX JSON: %v", filepath.Base(path), err)
		return
	}
	// pkg:golang/github.com/petstore/inventory-kit@VERSION?goarch=arm64&goos=linux&type=module#cmd/inventory-mock
	purl := sbom.Metadata.Component.Purl
	if !strings.HasPrefix(purl, "pkg:golang/github.com/petstore/inventory-kit@") || !strings.HasSuffix(purl, "#cmd/"+command) ||
		!strings.Contains(purl, "goos="+goos) || !strings.Contains(purl, "goarch="+goarch) {
		t.Errorf("%s describes %q; want cmd/%s of the kit for %s/%s", filepath.Base(path), purl, command, goos, goarch)
	}
	if !slices.ContainsFunc(sbom.Components, func(c struct{ Name, Version string }) bool {
		return c.Name == "github.com/pb33f/libopenapi" && c.Version != ""
	}) {
		t.Errorf("%s does not list github.com/pb33f/libopenapi among its %d components", filepath.Base(path), len(sbom.Components))
	}
}
