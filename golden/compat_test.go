package golden_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
)

// corpus is one frozen version directory with the builders of its expected values.
type corpus struct {
	version int
	cases   []goldenv1.Case
}

// corpora lists every frozen version. A new version adds an entry; none is ever removed.
var corpora = []corpus{
	{goldenv1.Version, goldenv1.Cases()},
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

// Scenario: golden blobs decode with current bindings, for the versioned state blobs through the
// runtime's own decode path (parse → version check → migrate): each blob must equal its frozen
// builder's value migrated to the current version, with nothing to repair.
func TestVersionedGoldenBlobsMigrateToCurrent(t *testing.T) {
	seen := 0
	for _, c := range corpora {
		for _, gc := range c.cases {
			want := gc.Build()
			if _, err := migrate.Version(want); err != nil {
				continue // a wire message: additive only, never migrated
			}
			seen++
			t.Run(filepath.Join("v"+strconv.Itoa(c.version), gc.File), func(t *testing.T) {
				blob, err := os.ReadFile(filepath.Join("v"+strconv.Itoa(c.version), gc.File))
				if err != nil {
					t.Fatal(err)
				}
				res, err := migrate.Migrate(want)
				if err != nil {
					t.Fatalf("frozen value does not migrate: %v", err)
				}
				if res.From != uint32(c.version) || res.To != migrate.CurrentStateSchemaVersion {
					t.Fatalf("a v%d blob's builder is at version %d", c.version, res.From)
				}
				got, stats, err := decodeCell(want, blob)
				if err != nil {
					t.Fatalf("statecodec refuses the blob: %v", err)
				}
				if !proto.Equal(got, want) {
					t.Fatalf("decoded and migrated blob differs from its migrated builder (-want +got):\n%s",
						cmp.Diff(want, got, protocmp.Transform()))
				}
				wantStats := statecodec.Stats{}
				if res.Migrated() {
					wantStats.Migrated = 1
				}
				if stats != wantStats {
					t.Fatalf("decode stats %+v, want %+v: a frozen blob needs no repair", stats, wantStats)
				}
			})
		}
	}
	// Per version: memory, two continuations, two caches; v1 also has the continuations of a
	// suspended handler activation (its journal) and of a handler's durable wait.
	if want := 5*len(corpora) + 2; seen != want {
		t.Fatalf("%d versioned state blobs in the corpora, want %d (memory, two continuations, two caches per version, and v1's two handler continuations)", seen, want)
	}
}

// decodeCell runs blob through the statecodec decoder of want's cell.
func decodeCell(want proto.Message, blob []byte) (proto.Message, statecodec.Stats, error) {
	switch want.(type) {
	case *pb.MemoryBlob:
		m, err := statecodec.DecodeMemory(blob, statecodec.MemoryOptions{})
		if err != nil {
			return nil, statecodec.Stats{}, err
		}
		return m.Proto(), m.Stats(), nil
	case *pb.LlmCacheBlob:
		c, err := statecodec.DecodeCache(blob, statecodec.CacheOptions{})
		if err != nil {
			return nil, statecodec.Stats{}, err
		}
		return c.Proto(), c.Stats(), nil
	case *pb.Continuation:
		c, err := statecodec.DecodeContinuation(blob)
		if err != nil || c == nil {
			return nil, statecodec.Stats{}, err
		}
		return c.Proto(), c.Stats(), nil
	}
	return nil, statecodec.Stats{}, fmt.Errorf("no state cell for %T", want)
}

// The current state_schema_version has the newest frozen corpus, and every version from 1 up to
// it has one: the outgoing version of each bump stays frozen for the compatibility test.
func TestCurrentVersionHasTheNewestCorpus(t *testing.T) {
	current := int(migrate.CurrentStateSchemaVersion)
	for i, c := range corpora {
		if c.version != i+1 {
			t.Fatalf("corpora[%d] is v%d; the corpora must list v1, v2, … in order without gaps", i, c.version)
		}
		if len(c.cases) == 0 {
			t.Fatalf("v%d has no cases", c.version)
		}
	}
	if newest := corpora[len(corpora)-1].version; newest != current {
		t.Fatalf("newest corpus is v%d, current state_schema_version is %d", newest, current)
	}
	if goldenv1.Version != corpora[0].version {
		t.Fatalf("goldenv1.Version = %d", goldenv1.Version)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[int]bool{}
	for _, e := range entries {
		if m := versionDir.FindStringSubmatch(e.Name()); e.IsDir() && m != nil {
			n, _ := strconv.Atoi(m[1])
			dirs[n] = true
		}
	}
	for v := 1; v <= current; v++ {
		blobs, _ := filepath.Glob(filepath.Join("v"+strconv.Itoa(v), "*.binpb"))
		if !dirs[v] || len(blobs) == 0 {
			t.Errorf("no frozen corpus golden/v%d/ for state_schema_version %d", v, v)
		}
		delete(dirs, v)
	}
	for v := range dirs {
		t.Errorf("golden/v%d/ is newer than the current state_schema_version %d", v, current)
	}
}
