package statecodec_test

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
)

var update = flag.Bool("update", false, "rewrite testdata/encodings.golden from the current encoders")

// The state ids are stable API: this list only ever grows.
func TestCellIDsAreStable(t *testing.T) {
	want := []statecodec.Cell{"seq.v1", "memory.v1", "llm_cache.v1", "continuation.v1", "pending.v1"}
	if got := statecodec.Cells(); !slices.Equal(got, want) {
		t.Fatalf("Cells() = %v, want %v", got, want)
	}
}

// Wire-contract scenario "Schema version defaults are explicit", constructor half: runtime
// constructors set state_schema_version = 1, and a parsed version-0 blob is told apart.
func TestSchemaVersionDefaultsAreExplicit(t *testing.T) {
	if migrate.CurrentStateSchemaVersion != 1 {
		t.Fatalf("current version %d", migrate.CurrentStateSchemaVersion)
	}
	cont, err := statecodec.Suspend(suspension())
	if err != nil {
		t.Fatal(err)
	}
	constructed := []struct {
		name   string
		encode func() ([]byte, error)
		into   proto.Message
	}{
		{"NewMemory", statecodec.NewMemory(statecodec.MemoryOptions{}).Encode, &pb.MemoryBlob{}},
		{"NewCache", statecodec.NewCache(statecodec.CacheOptions{}).Encode, &pb.LlmCacheBlob{}},
		{"Suspend", cont.Encode, &pb.Continuation{}},
	}
	for _, c := range constructed {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(b, c.into); err != nil {
				t.Fatal(err)
			}
			if v, _ := migrate.Version(c.into); v != 1 {
				t.Fatalf("%s writes state_schema_version %d, want 1 written explicitly", c.name, v)
			}
		})
	}
	pre := []struct {
		name  string
		stats func([]byte) (statecodec.Stats, error)
	}{
		{"memory", func(b []byte) (statecodec.Stats, error) {
			m, err := statecodec.DecodeMemory(b, statecodec.MemoryOptions{})
			if err != nil {
				return statecodec.Stats{}, err
			}
			return m.Stats(), nil
		}},
		{"cache", func(b []byte) (statecodec.Stats, error) {
			c, err := statecodec.DecodeCache(b, statecodec.CacheOptions{})
			if err != nil {
				return statecodec.Stats{}, err
			}
			return c.Stats(), nil
		}},
		{"continuation", func(b []byte) (statecodec.Stats, error) {
			c, err := statecodec.DecodeContinuation(b)
			if err != nil {
				return statecodec.Stats{}, err
			}
			return c.Stats(), nil
		}},
	}
	for _, p := range pre {
		t.Run("pre-versioned "+p.name, func(t *testing.T) {
			// Field 2 present, field 1 absent: a non-empty blob at version 0.
			st, err := p.stats([]byte{0x12, 0x00})
			if p.name == "continuation" {
				st, err = p.stats([]byte{0x10, 0x05})
			}
			if err != nil || st.PreVersioned != 1 || st.Migrated != 1 {
				t.Fatalf("stats %+v, %v: a version-0 blob must be upgraded explicitly", st, err)
			}
			v1, err := p.stats([]byte{0x08, 0x01})
			if err != nil || v1 != (statecodec.Stats{}) {
				t.Fatalf("a v1 blob reads as %+v, %v", v1, err)
			}
		})
	}
}

// encodingCases pins one encoding per cell, byte for byte: the encodings are stable API and
// deterministic. Refresh testdata/encodings.golden only with -update, and only for a new case.
func encodingCases(t *testing.T) map[string][]byte {
	mem := statecodec.NewMemory(statecodec.MemoryOptions{})
	for i, kv := range [][2]string{{"a", "alpha"}, {"b", "bravo!"}, {"c", "charlie"}} {
		if err := mem.Put(kv[0], []byte(kv[1]), t0+int64(i+1)*1000); err != nil {
			t.Fatal(err)
		}
	}
	cache := statecodec.NewCache(statecodec.CacheOptions{MaxResponseBytes: 16})
	for i, r := range []string{"short answer", "an answer longer than sixteen bytes"} {
		if _, err := cache.Store(cacheKey(strconv.Itoa(i)), []byte(r), t0+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	cont, err := statecodec.Suspend(suspension())
	if err != nil {
		t.Fatal(err)
	}
	pending := statecodec.NewPending()
	for _, ti := range []*pb.ToolIntent{
		{IntentId: "i-1", EntityKey: []byte("customer-0042"), Seq: 7, StepIndex: 2, ToolName: "refund", ArgsJson: `{"amount":"12"}`, Kind: pb.ToolIntent_TOOL},
		{IntentId: "i-2", EntityKey: []byte("customer-0042"), Seq: 7, StepIndex: 3, ToolName: "refund", Kind: pb.ToolIntent_APPROVAL},
	} {
		if err := pending.Add(ti); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]byte{}
	add := func(name string, b []byte, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b
	}
	b, err := statecodec.EncodeSeq(8)
	add("seq.v1", b, err)
	b, err = mem.Encode()
	add("memory.v1", b, err)
	b, err = cache.Encode()
	add("llm_cache.v1", b, err)
	b, err = cont.Encode()
	add("continuation.v1", b, err)
	b, err = pending.Encode()
	add("pending.v1", b, err)
	return out
}

func TestEncodingsAreStable(t *testing.T) {
	path := filepath.Join("testdata", "encodings.golden")
	got := encodingCases(t)
	if *update {
		var sb strings.Builder
		sb.WriteString("# One encoding per state cell, pinned byte for byte (hex). Regenerate only with -update.\n")
		for _, c := range statecodec.Cells() {
			fmt.Fprintf(&sb, "%s %s\n", c, hex.EncodeToString(got[string(c)]))
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			name, h, _ := strings.Cut(line, " ")
			want[name] = h
		}
	}
	if len(want) != len(statecodec.Cells()) {
		t.Fatalf("golden file pins %d cells, want %d", len(want), len(statecodec.Cells()))
	}
	for _, c := range statecodec.Cells() {
		if h := hex.EncodeToString(got[string(c)]); h != want[string(c)] {
			t.Errorf("%s encoding changed:\n got %s\nwant %s", c, h, want[string(c)])
		}
		// Encoding twice gives the same bytes.
		if again := encodingCases(t)[string(c)]; hex.EncodeToString(again) != want[string(c)] {
			t.Errorf("%s encoding is not deterministic", c)
		}
	}
}

// Determinism and layering, checked on the source: no wall-clock read and no Beam import in
// this package or in migrate.
func TestNoWallClockAndNoBeam(t *testing.T) {
	forbidden := map[string]bool{"Now": true, "Since": true, "Until": true, "Tick": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true}
	for _, dir := range []string{".", filepath.Join("..", "migrate")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if strings.Contains(imp.Path.Value, "apache/beam") {
					t.Errorf("%s imports %s", path, imp.Path.Value)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && forbidden[sel.Sel.Name] {
						t.Errorf("%s reads the clock: time.%s", path, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
