package devices_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

func keyring(tb testing.TB) *intent.Keyring {
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		tb.Fatal(err)
	}
	return kr
}

// The demo traffic through the activation core: quiet readings make no model call and no
// output but traces; the anomaly looks the device up inline, dispatches with the exact
// uint64 id in a signed intent, and its result resumes to the model's final answer; the
// unreadable reading is an envelope_invalid dead letter.
func TestDemoTraffic(t *testing.T) {
	a, err := devices.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	kr := keyring(t)
	stores := map[string]host.MapStore{}
	type step struct {
		key                         string
		calls, intents, finals, dls int
	}
	var got []step
	var res []*host.Result
	sc := bufio.NewScanner(bytes.NewReader(devices.Envelopes))
	for sc.Scan() {
		env := &pb.AgentEnvelope{}
		if err := protojson.Unmarshal(sc.Bytes(), env); err != nil {
			t.Fatal(err)
		}
		k := string(env.GetEntityKey())
		if stores[k] == nil {
			stores[k] = host.MapStore{}
		}
		r, _ := host.Activate(context.Background(), a, stores[k], env, host.Deps{Keyring: kr})
		stores[k].Apply(r)
		res = append(res, r)
		got = append(got, step{k, r.ModelCalls, len(r.Intents), len(r.Finals), len(r.DeadLetters)})
	}
	want := []step{
		{"dev-17", 0, 0, 0, 0},
		{"dev-9007199254740993", 0, 0, 0, 0},
		{"dev-17", 0, 0, 0, 0},
		{"dev-9007199254740993", 2, 1, 0, 0},
		{"dev-9007199254740993", 1, 0, 1, 0},
		{"dev-17", 0, 0, 0, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d envelopes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("envelope %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	ti := res[3].Intents[0]
	if ti.GetToolName() != devices.ToolDispatch || !strings.Contains(ti.GetArgsJson(), `"device_id":"9007199254740993"`) {
		t.Errorf("dispatch intent %s %s", ti.GetToolName(), ti.GetArgsJson())
	}
	if o := intent.Verify(ti, kr); o != intent.OK {
		t.Errorf("the dispatch intent verifies as %v", o)
	}
	if msg := res[4].Finals[0].GetMessage(); !strings.Contains(msg, "T-4411") {
		t.Errorf("final %q", msg)
	}
	if r := res[5].DeadLetters[0].GetReason(); r != string(records.ReasonEnvelopeInvalid) {
		t.Errorf("dead letter %s", r)
	}
	mem, err := statecodec.DecodeMemory(stores["dev-17"][statecodec.CellMemory], statecodec.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := mem.Peek(devices.RingKey)
	if !bytes.Contains(ring, []byte("-18250")) || !bytes.Contains(ring, []byte("-18900")) {
		t.Errorf("ring %q lacks the quiet readings", ring)
	}
}

func TestParseReading(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     devices.Reading
		ok       bool
	}{
		{"quiet", `{"device_id":"17","milli_c":-18250}`, devices.Reading{DeviceID: 17, MilliC: -18250}, true},
		{"max uint64", `{"device_id":"18446744073709551615","milli_c":0}`, devices.Reading{DeviceID: 1<<64 - 1}, true},
		{"beyond float precision", `{"device_id":"9007199254740993","milli_c":91000}`, devices.Reading{DeviceID: 9007199254740993, MilliC: 91000}, true},
		{"id as a number", `{"device_id":17,"milli_c":1}`, devices.Reading{}, false},
		{"leading zero", `{"device_id":"017","milli_c":1}`, devices.Reading{}, false},
		{"negative id", `{"device_id":"-1","milli_c":1}`, devices.Reading{}, false},
		{"fractional", `{"device_id":"1","milli_c":1.5}`, devices.Reading{}, false},
		{"missing milli_c", `{"device_id":"1"}`, devices.Reading{}, false},
		{"unknown member", `{"device_id":"1","milli_c":1,"x":0}`, devices.Reading{}, false},
		{"trailing data", `{"device_id":"1","milli_c":1} {}`, devices.Reading{}, false},
		{"not json", `warm`, devices.Reading{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := devices.ParseReading([]byte(tc.in))
			if tc.ok != (err == nil) || got != tc.want {
				t.Fatalf("ParseReading = %+v, %v", got, err)
			}
			if err != nil && !errors.Is(err, devices.ErrReading) {
				t.Fatalf("error %v is not ErrReading", err)
			}
		})
	}
}

func FuzzParseReading(f *testing.F) {
	f.Add([]byte(`{"device_id":"17","milli_c":-18250}`))
	f.Add([]byte(`{"device_id":"9007199254740993","milli_c":1e3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := devices.ParseReading(b)
		if err != nil {
			if !errors.Is(err, devices.ErrReading) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if again, err := devices.ParseReading(b); err != nil || again != r {
			t.Fatalf("not deterministic")
		}
	})
}
