// Command goldengen writes the golden corpus of the current state_schema_version:
//
//	go run ./golden/cmd/goldengen          write golden/v<N>/ of a new version
//	go run ./golden/cmd/goldengen -new     add the blobs of cases added within the version
//
// run from the repository root. It writes golden/v<N>/ for the current version only and refuses
// to write into a directory that already holds any blob: a golden corpus is frozen once written.
// With -new it writes only the cases whose blob does not exist yet (an additive field gets a
// new blob through a new case) and never opens an existing blob for writing.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/migrate"
)

// current names the builders of the current version; switch it when a version is added.
var (
	currentVersion = goldenv1.Version
	currentCases   = goldenv1.Cases
)

var (
	errNotCurrent = errors.New("not the current state_schema_version")
	errFrozen     = errors.New("a golden corpus is frozen and never rewritten")
)

var addNew = flag.Bool("new", false, "write only the blobs of cases that have none yet")

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goldengen:", err)
		os.Exit(1)
	}
}

func run() error {
	if currentVersion != int(migrate.CurrentStateSchemaVersion) {
		return fmt.Errorf("%w: builders are those of v%d, the current version is %d; switch current to the new version's builders",
			errNotCurrent, currentVersion, migrate.CurrentStateSchemaVersion)
	}
	dir := filepath.Join("golden", fmt.Sprintf("v%d", currentVersion))
	if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
		return fmt.Errorf("run from the repository root (no %s/doc.go): %v", dir, err)
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*.binpb"))
	if err != nil {
		return err
	}
	if len(existing) > 0 && !*addNew {
		return fmt.Errorf("%w: %s already holds %d blobs", errFrozen, dir, len(existing))
	}
	for _, c := range currentCases() {
		if !strings.HasSuffix(c.File, ".binpb") || filepath.Base(c.File) != c.File {
			return fmt.Errorf("case file %q must be a plain *.binpb name", c.File)
		}
		if _, err := os.Stat(filepath.Join(dir, c.File)); err == nil {
			continue // frozen
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.Build())
		if err != nil {
			return fmt.Errorf("%s: %v", c.File, err)
		}
		if err := writeNew(filepath.Join(dir, c.File), b); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%d bytes): %s\n", filepath.Join(dir, c.File), len(b), c.Pins)
	}
	return nil
}

// writeNew writes a blob that must not exist yet.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
