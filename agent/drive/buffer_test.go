package drive

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func TestBucket(t *testing.T) {
	for _, tc := range []struct{ event, res, want int64 }{
		{1000, 1000, 1000}, {1001, 1000, 2000}, {1, 1000, 1000}, {0, 1000, 0},
		{-1, 1000, 0}, {-1001, 1000, -1000}, {1234, 1, 1234}, {1234, 0, 1234},
	} {
		if got := Bucket(tc.event, tc.res); got != tc.want {
			t.Errorf("Bucket(%d, %d) = %d, want %d", tc.event, tc.res, got, tc.want)
		}
		if got := Bucket(tc.event, tc.res); got < tc.event {
			t.Errorf("Bucket(%d, %d) = %d is before the event", tc.event, tc.res, got)
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
		AppendFrame(nil, 30, env(30, "c")),
		AppendFrame(AppendFrame(nil, 10, env(10, "b")), 50, env(50, "late")),
		AppendFrame(nil, 10, env(10, "a")),
		AppendFrame(nil, 20, env(20, "d")),
	}
	due, rest, _, bad := Split(elems, 30)
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
	if _, _, _, bad := Split([][]byte{{1, 2, 3}}, 10); bad != 1 {
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
	f.Add(AppendFrame(AppendFrame(nil, 1, []byte("x")), -5, nil))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, err := parseFrames(b, nil)
		if err != nil {
			return
		}
		var again []byte
		for _, fr := range frames {
			again = AppendFrame(again, fr.eventMs, fr.data)
		}
		if !bytes.Equal(again, b) {
			t.Fatal("frames do not re-encode to their input")
		}
	})
}
