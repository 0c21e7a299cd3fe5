package statedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/records"
)

// File and marker names inside a state directory.
const (
	MarkerName    = "drain.json"
	SnapshotsName = records.SnapshotsName + ".binpb" // length-delimited StateSnapshots, as the snapshots output writes them
	EnvelopesName = "envelopes.binpb"                // length-delimited binary AgentEnvelopes, as run reads them
	genPrefix     = "gen-"
)

// Marker states.
const (
	StateRunning = "running"
	StateDrained = "drained"
)

// Marker is the content of drain.json: whether the last run drained, and the generation
// directory holding the last completed drain.
type Marker struct {
	State      string `json:"state"`
	Generation int64  `json:"generation"`
	Keys       int    `json:"keys"`
	Envelopes  int    `json:"envelopes"`
	// WatermarkMs is the input's watermark when the run drained (milliseconds since the
	// epoch; 0 when it had none): the restarted reader starts there, so the envelopes the
	// drain kept come due without a new message.
	WatermarkMs int64 `json:"watermark_ms,omitempty"`
	// Time is when the marker was written (wall clock, for people; nothing reads it).
	Time string `json:"time,omitempty"`
}

// ParseMarker decodes drain.json strictly: unknown fields, an unknown state or a negative
// count are errors.
func ParseMarker(b []byte) (Marker, error) {
	var m Marker
	if err := jsontext.Decode(string(b), &m, jsontext.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return Marker{}, fmt.Errorf("%s: %w", MarkerName, err)
	}
	switch {
	case m.State != StateRunning && m.State != StateDrained:
		return Marker{}, fmt.Errorf("%s: unknown state %q", MarkerName, m.State)
	case m.Generation < 0 || m.Keys < 0 || m.Envelopes < 0 || m.WatermarkMs < 0:
		return Marker{}, fmt.Errorf("%s: negative generation, count or watermark", MarkerName)
	case m.State == StateDrained && m.Generation == 0:
		return Marker{}, fmt.Errorf("%s: drained without a generation", MarkerName)
	}
	return m, nil
}

// A Dir is a state directory opened by Begin for one run.
type Dir struct {
	path string
	// Last is the marker the previous run left (zero for a new directory).
	Last Marker
}

// Begin opens (creating it if needed) the state directory at path for a new run: it reads
// the marker the last run left, then marks the directory running, keeping the last
// completed drain's generation for Restore. Incomplete then tells whether the last run
// stopped without finishing its drain.
func Begin(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	d := &Dir{path: path}
	b, err := os.ReadFile(filepath.Join(path, MarkerName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if d.Last, err = ParseMarker(b); err != nil {
			return nil, fmt.Errorf("state directory %s: %w", path, err)
		}
	}
	if d.Last.Generation > 0 {
		for _, n := range []string{SnapshotsName, EnvelopesName} {
			if _, err := os.Stat(filepath.Join(d.gen(d.Last.Generation), n)); err != nil {
				return nil, fmt.Errorf("state directory %s: generation %d: %w", path, d.Last.Generation, err)
			}
		}
	}
	running := d.Last
	running.State = StateRunning
	if err := d.writeMarker(running); err != nil {
		return nil, err
	}
	return d, nil
}

// Incomplete reports whether the previous run started with this directory and did not
// finish its drain: what it changed since the last completed drain (or since it started,
// if none) is lost.
func (d *Dir) Incomplete() bool { return d.Last.State == StateRunning }

// Watermark is the input's watermark when the last completed drain ran (zero for none).
func (d *Dir) Watermark() time.Time {
	if d.Last.WatermarkMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(d.Last.WatermarkMs)
}

// Restore returns the files of the last completed drain (snapshots, envelopes), or empty
// strings when there was none.
func (d *Dir) Restore() (snapshots, envelopes string) {
	if d.Last.Generation == 0 {
		return "", ""
	}
	g := d.gen(d.Last.Generation)
	return filepath.Join(g, SnapshotsName), filepath.Join(g, EnvelopesName)
}

func (d *Dir) gen(n int64) string { return filepath.Join(d.path, fmt.Sprintf("%s%06d", genPrefix, n)) }

// Commit writes what c recorded as a new generation and then marks the directory drained
// with it and with the input's watermark at the drain (zero: none, the last drain's is
// kept); the older generations are removed afterwards.
func (d *Dir) Commit(c *Capture, watermark time.Time) (Marker, error) {
	next := d.Last.Generation + 1
	g := d.gen(next)
	if err := os.RemoveAll(g); err != nil { // a commit that stopped half-way
		return Marker{}, err
	}
	if err := os.Mkdir(g, 0o755); err != nil {
		return Marker{}, err
	}
	recs := c.records()
	m := Marker{State: StateDrained, Generation: next, Keys: len(recs), WatermarkMs: d.Last.WatermarkMs}
	if !watermark.IsZero() {
		m.WatermarkMs = max(m.WatermarkMs, watermark.UnixMilli())
	}
	snaps := records.Header((&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName())
	envs := records.Header((&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName())
	var err error
	for _, r := range recs {
		var b []byte
		if b, err = (proto.MarshalOptions{Deterministic: true}).Marshal(r.Snapshot); err != nil {
			break
		}
		snaps = records.AppendFrame(snaps, b)
		for _, e := range r.Envelopes {
			envs = records.AppendFrame(envs, e)
			m.Envelopes++
		}
	}
	if err == nil {
		err = records.WriteAtomic(filepath.Join(g, SnapshotsName), snaps, 0o644)
	}
	if err == nil {
		err = records.WriteAtomic(filepath.Join(g, EnvelopesName), envs, 0o644)
	}
	if err == nil {
		err = syncDir(g)
	}
	if err == nil {
		err = d.writeMarker(m)
	}
	if err != nil {
		return Marker{}, fmt.Errorf("state directory %s: %w", d.path, err)
	}
	d.Last = m
	d.prune(next)
	return m, nil
}

// prune removes the generations other than keep; a failure only leaves garbage behind.
func (d *Dir) prune(keep int64) {
	entries, _ := os.ReadDir(d.path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), genPrefix) && filepath.Join(d.path, e.Name()) != d.gen(keep) {
			os.RemoveAll(filepath.Join(d.path, e.Name()))
		}
	}
}

func (d *Dir) writeMarker(m Marker) error {
	m.Time = time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := records.WriteAtomic(filepath.Join(d.path, MarkerName), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return syncDir(d.path)
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
