package drive_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
)

// newDriver builds the support agent over script with a test keyring.
func newDriver(t testing.TB, script []byte, resolution int64) *drive.Driver {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "script.jsonl")
	ring := filepath.Join(dir, "ring.json")
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	if err := os.WriteFile(p, script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ring, []byte(`{"active":"t","keys":[{"id":"t","secret":"`+secret+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.Build(support.Name, []byte(fmt.Sprintf(`{"script":%q}`, p)))
	if err != nil {
		t.Fatal(err)
	}
	return &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: resolution}}
}

// runAll runs every key of set through d, values in the given order, and returns the sorted
// outputs.
func runAll(d *drive.Driver, set *scenario.Set, shuffle *rand.Rand) [][]byte {
	values := map[string][][]byte{}
	var keys []string
	add := func(key string, v []byte) {
		if _, ok := values[key]; !ok {
			keys = append(keys, key)
		}
		values[key] = append(values[key], v)
	}
	for _, rec := range set.Snapshots {
		snap := &pb.StateSnapshot{}
		if proto.Unmarshal(rec, snap) == nil && len(snap.GetEntityKey()) > 0 {
			add(string(snap.GetEntityKey()), drive.RestoreValue(snap))
		}
	}
	for _, rec := range set.Records {
		env := &pb.AgentEnvelope{}
		if proto.Unmarshal(rec, env) == nil && len(env.GetEntityKey()) > 0 && env.GetPayload() != nil {
			canon, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
			add(string(env.GetEntityKey()), canon)
		}
	}
	var out [][]byte
	for _, k := range keys {
		vs := values[k]
		if shuffle != nil {
			shuffle.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		}
		d.Run(context.Background(), []byte(k), vs, func(kind int64, b []byte) {
			out = append(out, append([]byte{byte(kind)}, b...))
		})
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// TestOrderIndependence: the outputs depend neither on the ordering resolution nor on the
// arrival order of a key's inputs, and OutputsOnly changes none.
func TestOrderIndependence(t *testing.T) {
	checkIndependence(t, 3, 60)
}

func FuzzOrderIndependence(f *testing.F) {
	f.Add(uint64(11))
	f.Fuzz(func(t *testing.T, seed uint64) { checkIndependence(t, seed, 6) })
}

func checkIndependence(t *testing.T, seed uint64, n int) {
	gen, err := scenario.New(seed, n)
	if err != nil {
		t.Fatal(err)
	}
	ref := newDriver(t, gen.Script(), 1)
	set, err := gen.Build(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	want := runAll(ref, set, nil)
	if len(want) == 0 {
		t.Fatal("no outputs")
	}
	for _, res := range []int64{1000, 60000} {
		for _, only := range []bool{false, true} {
			d := newDriver(t, gen.Script(), res)
			d.OutputsOnly = only
			got := runAll(d, set, rand.New(rand.NewPCG(seed, uint64(res))))
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("resolution %d ms, outputs only %v, shuffled input: %d outputs differ from %d at resolution 1 ms", res, only, len(got), len(want))
			}
		}
	}
}
