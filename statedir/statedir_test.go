package statedir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statedir"
)

func snap(key string, seq int64) *pb.StateSnapshot {
	return &pb.StateSnapshot{StateSchemaVersion: 1, EntityKey: []byte(key), Seq: seq}
}

func readSnaps(t *testing.T, path string) []*pb.StateSnapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := records.Records(path, b, (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName())
	if err != nil {
		t.Fatal(err)
	}
	var out []*pb.StateSnapshot
	for _, r := range recs {
		s := &pb.StateSnapshot{}
		if err := proto.Unmarshal(r, s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// A drained directory is restored; a run that never commits leaves the marker running, the
// next Begin reports it and still restores the last completed drain.
func TestBeginCommitAndIncompleteDrain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	d, err := statedir.Begin(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Incomplete() {
		t.Fatal("a new directory is not an incomplete drain")
	}
	if s, e := d.Restore(); s != "" || e != "" {
		t.Fatalf("a new directory restores %q %q", s, e)
	}
	c := statedir.NewCapture()
	defer c.Close()
	if statedir.Lookup(c.ID()) != c || statedir.Lookup("") != nil {
		t.Fatal("lookup")
	}
	c.Put([]byte("b"), statedir.Record{Snapshot: snap("b", 1)})
	c.Put([]byte("a"), statedir.Record{Snapshot: snap("a", 7), Envelopes: [][]byte{{0x0a, 0x01, 'a'}}})
	c.Put([]byte("b"), statedir.Record{Snapshot: snap("b", 2)}) // the last record wins
	wm := time.UnixMilli(1767225600000)
	m, err := d.Commit(c, wm)
	if err != nil {
		t.Fatal(err)
	}
	if m.Keys != 2 || m.Envelopes != 1 || m.Generation != 1 || m.State != statedir.StateDrained || m.WatermarkMs != wm.UnixMilli() {
		t.Fatalf("marker %+v", m)
	}

	d2, err := statedir.Begin(dir) // the next run, which will crash
	if err != nil {
		t.Fatal(err)
	}
	if d2.Incomplete() {
		t.Fatal("the last run drained")
	}
	if !d2.Watermark().Equal(wm) {
		t.Fatalf("watermark %v, want the drained run's %v", d2.Watermark(), wm)
	}
	snaps, envs := d2.Restore()
	got := readSnaps(t, snaps)
	if len(got) != 2 || !proto.Equal(got[0], snap("a", 7)) || !proto.Equal(got[1], snap("b", 2)) {
		t.Fatalf("snapshots %v", got)
	}
	wantEnvs := append(records.Header((&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName()), 3, 0x0a, 0x01, 'a')
	if b, _ := os.ReadFile(envs); !bytes.Equal(b, wantEnvs) {
		t.Fatalf("envelopes %x", b)
	}

	d3, err := statedir.Begin(dir) // after the crash
	if err != nil {
		t.Fatal(err)
	}
	if !d3.Incomplete() || d3.Last.Generation != 1 {
		t.Fatalf("after a run without a drain: incomplete %v, %+v", d3.Incomplete(), d3.Last)
	}
	if s, _ := d3.Restore(); s != snaps {
		t.Fatalf("restores %q, want the last drain's %q", s, snaps)
	}
	if m, err := d3.Commit(statedir.NewCapture(), time.Time{}); err != nil || m.WatermarkMs != wm.UnixMilli() {
		t.Fatalf("a drain without a watermark: %+v, %v; want the last drain's watermark kept", m, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != statedir.MarkerName || names[1] != "gen-000002" {
		t.Fatalf("directory holds %v, want the marker and the last generation only", names)
	}
}

func TestBeginRefusesABrokenDirectory(t *testing.T) {
	for _, tc := range []struct{ name, marker string }{
		{"not json", "{"},
		{"unknown state", `{"state":"halfway"}`},
		{"unknown field", `{"state":"running","extra":1}`},
		{"data after the marker", `{"state":"running"} {}`},
		{"missing generation", `{"state":"drained","generation":4}`},
		{"negative watermark", `{"state":"drained","generation":1,"watermark_ms":-5}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, statedir.MarkerName), []byte(tc.marker), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := statedir.Begin(dir); err == nil {
				t.Fatal("Begin accepted it")
			}
		})
	}
}

func FuzzParseMarker(f *testing.F) {
	f.Add([]byte(`{"state":"drained","generation":3,"keys":2,"envelopes":1,"time":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"state":"running"}`))
	f.Add([]byte(`{"state":"drained","generation":-1}`))
	f.Add([]byte(`{"state":"drained","generation":2,"watermark_ms":1767225600000}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := statedir.ParseMarker(b)
		if err != nil {
			return
		}
		if m.State != statedir.StateRunning && m.State != statedir.StateDrained || m.Generation < 0 || m.WatermarkMs < 0 {
			t.Fatalf("accepted %+v", m)
		}
	})
}
