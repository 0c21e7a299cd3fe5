package records_test

import (
	"testing"

	"github.com/beamagents/beamagents/records"
)

// The table of the outputs: tags in order, each kind found again by its tag, type, code and
// file names; the codes and topic flags are pinned (the console's store layout and the
// command line depend on them).
func TestKinds(t *testing.T) {
	codes := map[int64]byte{records.OutIntent: 'i', records.OutTrace: 't', records.OutFinal: 'f', records.OutSnapshot: 's', records.OutDeadLetter: 'd'}
	topics := map[int64]string{records.OutIntent: "intents_topic", records.OutTrace: "traces_topic", records.OutFinal: "finals_topic",
		records.OutSnapshot: "snapshots_topic", records.OutDeadLetter: "errors_topic"}
	ks := records.Kinds()
	if len(ks) != 5 {
		t.Fatalf("%d kinds", len(ks))
	}
	for i, k := range ks {
		if k.Out != records.OutIntent+int64(i) || k.Code != codes[k.Out] || k.Topic != topics[k.Out] {
			t.Fatalf("kind %d: %+v", i, k)
		}
		if k.New().ProtoReflect().Descriptor().FullName() != k.Type {
			t.Fatalf("%s: New gives another type", k.Name)
		}
		for _, find := range []func() (records.Kind, bool){
			func() (records.Kind, bool) { return records.KindOf(k.Out) },
			func() (records.Kind, bool) { return records.KindOfType(k.Type) },
			func() (records.Kind, bool) { return records.KindOfCode(k.Code) },
		} {
			if got, ok := find(); !ok || got.Out != k.Out {
				t.Fatalf("%s: found %+v %v", k.Name, got, ok)
			}
		}
		for _, f := range []string{k.Name + ".binpb", "out/" + k.Name + ".jsonl", k.Name + "-00000-of-00002.binpb"} {
			if records.NamedType(f) != k.Type {
				t.Fatalf("%s names %q", f, records.NamedType(f))
			}
		}
	}
	if _, ok := records.KindOf(0); ok {
		t.Fatal("tag 0 is a kind")
	}
	if _, ok := records.KindOfCode(0); ok {
		t.Fatal("code 0 is a kind")
	}
	if records.NamedType("results.binpb") != "beam_agents.v1.AgentEnvelope" {
		t.Fatal("results files are not envelopes")
	}
}

func TestSetOf(t *testing.T) {
	s := records.Set[string]{"i", "t", "f", "s", "d"}
	for _, k := range records.Kinds() {
		if s.Of(k.Out) != string(k.Code) {
			t.Fatalf("%s: %q", k.Name, s.Of(k.Out))
		}
	}
	for _, out := range []int64{0, -1, records.OutDeadLetter + 1} {
		if s.Of(out) != "d" {
			t.Fatalf("tag %d: %q, want the dead letters'", out, s.Of(out))
		}
	}
}
