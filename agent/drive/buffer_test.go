package drive

import (
	"bytes"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func TestBucket(t *testing.T) {
	for _, tc := range []struct{ event, res, want int64 }{
		{1000, 1000, 1000}, {1001, 1000, 2000}, {1, 1000, 1000}, {0, 1000, 0},
		{-1, 1000, 0}, {-1001, 1000, -1000}, {1234, 1, 1234}, {1234, 0, 1234},
	} {
		if got := bucketOf(tc.event, tc.res); got != tc.want {
			t.Errorf("bucketOf(%d, %d) = %d, want %d", tc.event, tc.res, got, tc.want)
		}
		if got := bucketOf(tc.event, tc.res); got < tc.event {
			t.Errorf("bucketOf(%d, %d) = %d is before the event", tc.event, tc.res, got)
		}
	}
}

func env(t int64, text string) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: t,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
	return b
}

func TestSplitDue(t *testing.T) {
	elems := [][]byte{
		appendFrame(nil, 30, env(30, "c")),
		appendFrame(appendFrame(nil, 10, env(10, "b")), 50, env(50, "late")),
		appendFrame(nil, 10, env(10, "a")),
		appendFrame(nil, 20, env(20, "d")),
	}
	due, rest, _, bad := splitBuffer(elems, 30)
	if bad != 0 {
		t.Fatalf("bad %d", bad)
	}
	var order []string
	for _, d := range due {
		order = append(order, string(d.Env.GetExternalEvent()))
	}
	// Event time first; equal times by bytes ("a" < "b").
	if got := bytes.Join(toBytes(order), []byte(",")); string(got) != "a,b,d,c" {
		t.Fatalf("order %s", got)
	}
	left, err := parseFrames(rest, nil)
	if err != nil || len(left) != 1 || left[0].eventMs != 50 {
		t.Fatalf("rest %v %v", left, err)
	}
	if _, _, _, bad := splitBuffer([][]byte{{1, 2, 3}}, 10); bad != 1 {
		t.Fatal("a broken element is not reported")
	}
}

func toBytes(s []string) [][]byte {
	out := make([][]byte, len(s))
	for i := range s {
		out[i] = []byte(s[i])
	}
	return out
}

func FuzzParseFrames(f *testing.F) {
	f.Add(appendFrame(appendFrame(nil, 1, []byte("x")), -5, nil))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, err := parseFrames(b, nil)
		if err != nil {
			return
		}
		var again []byte
		for _, fr := range frames {
			again = appendFrame(again, fr.eventMs, fr.data)
		}
		if !bytes.Equal(again, b) {
			t.Fatal("frames do not re-encode to their input")
		}
	})
}

// What splitBuffer leaves behind (the rest and the timers), split again at the same time, gives
// nothing due, nothing bad, the same rest and the same timers.
func FuzzSplit(f *testing.F) {
	f.Add(AppendTimers(appendFrame(nil, 10, env(10, "a")), Timers{"deadline": 40, "ttl": 99}), int64(20))
	f.Add(appendFrame(appendFrame(nil, 30, env(30, "b")), 5, []byte{0xff}), int64(30))
	f.Fuzz(func(t *testing.T, elem []byte, at int64) {
		_, rest, timers, _ := splitBuffer([][]byte{elem}, at) // a frame's own time decides whether it is due
		again, rest2, timers2, bad2 := splitBuffer([][]byte{AppendTimers(rest, timers)}, at)
		if len(again) != 0 || !bytes.Equal(rest2, rest) || bad2 != 0 || len(timers2) != len(timers) {
			t.Fatalf("re-split: %d due, %d bad, rest equal %v, timers %v vs %v", len(again), bad2, bytes.Equal(rest2, rest), timers2, timers)
		}
	})
}

func TestChanges(t *testing.T) {
	got := timerChanges(Timers{"deadline": 5, "ttl": 9}, Timers{"deadline": 7, "x": 1})
	want := []string{"deadline set 7", "ttl clear", "x set 1"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i, op := range got {
		s := op.Tag + " clear"
		if op.Set {
			s = op.Tag + " set " + strconv.FormatInt(op.AtMs, 10)
		}
		if s != want[i] {
			t.Fatalf("op %d = %s, want %s", i, s, want[i])
		}
	}
}

func TestWoken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		timers Timers
		tag    string
		want   Timers
	}{
		{"unknown deadline fires", Timers{}, "deadline", Timers{"deadline": 5}},
		{"known deadline stays", Timers{"deadline": 9}, "deadline", Timers{"deadline": 9}},
		{"ttl only from the buffer", Timers{}, "ttl", Timers{}},
		{"ordering timer", Timers{"ttl": 7}, OrderTag(1000), Timers{"ttl": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.timers.Woken(tc.tag, 5)
			if len(tc.timers) != len(tc.want) || tc.timers["deadline"] != tc.want["deadline"] || tc.timers["ttl"] != tc.want["ttl"] {
				t.Fatalf("%v, want %v", tc.timers, tc.want)
			}
		})
	}
}

// TestBagOps: how a step's effects change a raw buffer, one row per kind of change.
func TestBagOps(t *testing.T) {
	e30 := env(30, "c")
	bl := ReadBuffer([][]byte{appendFrame(nil, 50, env(50, "late")), AppendTimers(nil, Timers{"ttl": 90})}, 30)
	bl.Timers["deadline"] = 40 // as a step arms it
	left := bl.Bag()
	for _, tc := range []struct {
		name      string
		e         Effects
		wantClear bool
		wantAdd   []byte
	}{
		{"nothing", Effects{}, false, nil},
		{"an arriving envelope adds its frame", Effects{Buffer: &bufferedEnv{Env: &pb.AgentEnvelope{EventTimeMs: 30}, Raw: e30}}, false, appendFrame(nil, 30, e30)},
		{"a restore adds its armed timers", Effects{ArmTimers: Timers{"deadline": 7}}, false, AppendTimers(nil, Timers{"deadline": 7})},
		{"a rewrite clears and adds what is left", Effects{Rewrite: true, Bag: left}, true, left},
		{"a rewrite that leaves nothing only clears", Effects{Rewrite: true}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearFirst, add := tc.e.BagOps()
			if clearFirst != tc.wantClear || !bytes.Equal(add, tc.wantAdd) {
				t.Errorf("BagOps() = %v, %x; want %v, %x", clearFirst, add, tc.wantClear, tc.wantAdd)
			}
		})
	}
	due, rest, timers, _ := splitBuffer([][]byte{left}, 100)
	if len(due) != 1 || rest != nil || len(timers) != 2 || timers["deadline"] != 40 {
		t.Errorf("the left buffer reads back as %d due, %x, %v", len(due), rest, timers)
	}
}

// TestRebased: a rewrite keeps what was added after the step read the buffer; a buffer
// changed otherwise makes the step stale.
func TestRebased(t *testing.T) {
	a, b, c := []byte("a"), []byte("b"), []byte("c")
	for _, tc := range []struct {
		name      string
		read, now [][]byte
		rewritten []byte
		want      []byte
		ok        bool
	}{
		{"unchanged", [][]byte{a, b}, [][]byte{a, b}, []byte("R"), []byte("R"), true},
		{"appended", [][]byte{a}, [][]byte{a, b, c}, []byte("R"), []byte("Rbc"), true},
		{"appended to nothing left", [][]byte{a}, [][]byte{a, b}, nil, []byte("b"), true},
		{"nothing at all", nil, nil, nil, nil, true},
		{"cleared since", [][]byte{a, b}, [][]byte{a}, []byte("R"), nil, false},
		{"rewritten since", [][]byte{a}, [][]byte{c}, []byte("R"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Rebased(tc.read, tc.now, tc.rewritten)
			if ok != tc.ok || !bytes.Equal(got, tc.want) {
				t.Errorf("Rebased = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestEnvelopes: every envelope of a buffer, whatever its time, in processing order; timers
// and broken elements left out.
func TestEnvelopes(t *testing.T) {
	elems := [][]byte{
		appendFrame(appendFrame(nil, 50, env(50, "late")), 10, env(10, "b")),
		AppendTimers(nil, Timers{"ttl": 5}),
		{1, 2, 3},
		appendFrame(nil, 10, env(10, "a")),
	}
	got := Envelopes(elems)
	want := [][]byte{env(10, "a"), env(10, "b"), env(50, "late")}
	if len(got) != len(want) {
		t.Fatalf("%d envelopes, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("envelope %d differs", i)
		}
	}
}
