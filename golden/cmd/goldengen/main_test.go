package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/migrate"
)

// The generator writes the corpus of the current state_schema_version, and nothing else.
func TestGeneratesTheCurrentVersion(t *testing.T) {
	if currentVersion != int(migrate.CurrentStateSchemaVersion) {
		t.Fatalf("goldengen writes v%d, current state_schema_version is %d", currentVersion, migrate.CurrentStateSchemaVersion)
	}
}

func TestRunRefuses(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", ".."))
	before := corpusListing(t)
	tests := []struct {
		name    string
		version int
		want    error
	}{
		{"a version other than the current one", int(migrate.CurrentStateSchemaVersion) + 1, errNotCurrent},
		{"to rewrite a frozen corpus", int(migrate.CurrentStateSchemaVersion), errFrozen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			saved := currentVersion
			defer func() { currentVersion = saved }()
			currentVersion = tc.version
			if err := run(); !errors.Is(err, tc.want) {
				t.Fatalf("run() = %v, want %v", err, tc.want)
			}
		})
	}
	if after := corpusListing(t); after != before {
		t.Fatal("a refused run changed the corpus")
	}
}

// corpusListing returns the name, size and modification time of every corpus file.
func corpusListing(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("golden", "v*", "*.binpb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus found (%v)", err)
	}
	var sb strings.Builder
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "%s %d %s\n", f, fi.Size(), fi.ModTime())
	}
	return sb.String()
}

// With -new, a corpus whose every case has its blob is left exactly as it was.
func TestNewWritesOnlyMissingBlobs(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", ".."))
	before := corpusListing(t)
	*addNew = true
	defer func() { *addNew = false }()
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if after := corpusListing(t); after != before {
		t.Fatal("-new touched an existing blob")
	}
}
