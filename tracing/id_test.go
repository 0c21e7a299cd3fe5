package tracing_test

import (
	"encoding/hex"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// Known answers, computed independently of this code with Python's standard library
// (CPython 3, uuid module), ns = uuid.UUID("b1d7c4e2-93a6-5f08-8c31-7e5a9d0f2b46"):
//
//	trace id: uuid.uuid5(ns, f"{key.hex()}|{seq}").bytes.hex()
//	span id:  uuid.uuid5(ns, f"{key.hex()}|{seq}|{role}|{index}").bytes[:8].hex()

func TestTraceIDKnownAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		key  []byte
		seq  int64
		want string
	}{
		"ascii key":        {[]byte("customer-0042"), 7, "859e8a8aa4f35af4aa5fdb18ccdacda8"},
		"empty key, seq 0": {nil, 0, "378f83ab07415c7ab692e54f0c306644"},
		"non-UTF-8 key":    {[]byte{0xff, 0x00, 0xfe, 0x80}, 1, "ec5effdfba175270863a2af9ebf3cbac"},
		"seq 2^62":         {[]byte("k"), 1 << 62, "8ebca4324faf5231aa5f55c99b0bbec3"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tracing.TraceID(tc.key, tc.seq); hex.EncodeToString(got[:]) != tc.want {
				t.Fatalf("TraceID(%x, %d) = %x, want %s", tc.key, tc.seq, got, tc.want)
			}
		})
	}
}

func TestSpanIDKnownAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		key   []byte
		seq   int64
		role  string
		index uint32
		want  string
	}{
		"activation root":       {[]byte("customer-0042"), 7, tracing.RoleActivation, 0, "c1b4965e32075a20"},
		"timer":                 {[]byte("customer-0042"), 7, tracing.RoleTimer, 2, "8f1d3a1085c15392"},
		"event role":            {[]byte("customer-0042"), 7, tracing.EventRole(pb.TraceEvent_LLM_CALL), 1, "89460b842b955c60"},
		"empty key, seq 0":      {nil, 0, tracing.RoleActivation, 0, "5f8f030a1cd55d5a"},
		"non-UTF-8, last index": {[]byte{0xff, 0x00, 0xfe, 0x80}, 1, tracing.EventRole(pb.TraceEvent_INTENT_EMITTED), 1<<32 - 1, "d75b3a858fee59b6"},
		"seq 2^62":              {[]byte("k"), 1 << 62, tracing.EventRole(pb.TraceEvent_SUSPENDED), 3, "98b034233dc95fa9"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tracing.SpanID(tc.key, tc.seq, tc.role, tc.index); hex.EncodeToString(got[:]) != tc.want {
				t.Fatalf("SpanID(%x, %d, %s, %d) = %x, want %s", tc.key, tc.seq, tc.role, tc.index, got, tc.want)
			}
		})
	}
}

// Every event type's role is its enum name as the schema declares it.
func TestEventRoles(t *testing.T) {
	for typ, want := range map[pb.TraceEvent_EventType]string{
		pb.TraceEvent_LLM_CALL: "LLM_CALL", pb.TraceEvent_TOOL_CALL: "TOOL_CALL", pb.TraceEvent_INTENT_EMITTED: "INTENT_EMITTED",
		pb.TraceEvent_ERROR: "ERROR", pb.TraceEvent_SUSPENDED: "SUSPENDED",
	} {
		if got := tracing.EventRole(typ); got != want {
			t.Errorf("EventRole(%d) = %q, want %q", typ, got, want)
		}
	}
}

func TestDerivationsAllocateNothing(t *testing.T) {
	key := []byte("customer-0042")
	if n := testing.AllocsPerRun(100, func() {
		_ = tracing.TraceID(key, 7)
		_ = tracing.SpanID(key, 7, tracing.RoleActivation, 0)
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
