package golden_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	goldenv1 "github.com/beamagents/beamagents/golden/v1"
)

// corpus is one frozen version directory with the builders of its expected values.
type corpus struct {
	version int
	cases   []goldenv1.Case
}

// corpora lists every frozen version. A new version adds an entry; none is ever removed.
var corpora = []corpus{
	{1, goldenv1.Cases()},
}

var versionDir = regexp.MustCompile(`^v([1-9][0-9]*)$`)

// Scenario: golden blobs decode with current bindings.
func TestGoldenBlobsDecodeWithCurrentBindings(t *testing.T) {
	for _, c := range corpora {
		for _, gc := range c.cases {
			t.Run(filepath.Join("v"+strconv.Itoa(c.version), gc.File), func(t *testing.T) {
				blob, err := os.ReadFile(filepath.Join("v"+strconv.Itoa(c.version), gc.File))
				if err != nil {
					t.Fatal(err)
				}
				want := gc.Build()
				got := want.ProtoReflect().New().Interface()
				if err := proto.Unmarshal(blob, got); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !proto.Equal(got, want) {
					t.Fatalf("decoded blob differs from its frozen builder (-want +got):\n%s",
						cmp.Diff(want, got, protocmp.Transform()))
				}
			})
		}
	}
}

// Scenario: golden corpus is laid out per version, every blob has a builder, every builder a
// blob, and no fixture sits outside a version directory.
func TestGoldenCorpusLayout(t *testing.T) {
	registered := map[string]bool{}
	for _, c := range corpora {
		dir := "v" + strconv.Itoa(c.version)
		for _, gc := range c.cases {
			p := filepath.Join(dir, gc.File)
			if registered[p] {
				t.Errorf("%s registered twice", p)
			}
			registered[p] = true
			if _, err := os.Stat(p); err != nil {
				t.Errorf("builder without blob: %v", err)
			}
		}
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".go" {
			return err
		}
		top, _, _ := cutPath(path)
		if !versionDir.MatchString(top) || filepath.Dir(path) != top {
			t.Errorf("fixture %s is not directly inside a v<N> directory", path)
			return nil
		}
		if !registered[path] {
			t.Errorf("blob %s has no frozen builder", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cutPath(p string) (first, rest string, ok bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == filepath.Separator {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}
