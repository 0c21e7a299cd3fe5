package golden_test

// One test per scenario of the wire contract (docs/wire-and-state.md), named after it.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/intent"
)

func roundTrip[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustEqual(t *testing.T, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("not equal:\n got %v\nwant %v", got, want)
	}
}

func goldenBlob(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("v1", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenMessage(t *testing.T, name string) proto.Message {
	t.Helper()
	for _, c := range goldenv1.Cases() {
		if c.File == name {
			m := c.Build().ProtoReflect().New().Interface()
			if err := proto.Unmarshal(goldenBlob(t, name), m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no golden case %s", name)
	return nil
}

// olderBindings returns a message type for name from a copy of beam_agents.proto edited by
// edit: the way a reader on other (older or newer) bindings sees the same bytes.
func olderBindings(t *testing.T, name protoreflect.Name, edit func(*descriptorpb.FileDescriptorProto)) protoreflect.MessageType {
	t.Helper()
	fdp := protodesc.ToFileDescriptorProto(pb.File_beam_agents_v1_beam_agents_proto)
	edit(fdp)
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessageType(fd.Messages().ByName(name))
}

func messageProto(fdp *descriptorpb.FileDescriptorProto, name string) *descriptorpb.DescriptorProto {
	for _, m := range fdp.MessageType {
		if m.GetName() == name {
			return m
		}
	}
	panic(name)
}

func TestBindingsAreImportable(t *testing.T) {
	for _, m := range []proto.Message{&pb.MemoryBlob{}, &pb.ToolIntent{}, &pb.ToolResult{}, &pb.TraceEvent{},
		&pb.AgentEnvelope{}, &pb.Continuation{}, &pb.LlmCacheBlob{}, &pb.ActivationErrorRecord{}, &pb.StateSnapshot{}} {
		d := m.ProtoReflect().Descriptor()
		if d.ParentFile().Package() != "beam_agents.v1" {
			t.Errorf("%s is in package %s", d.FullName(), d.ParentFile().Package())
		}
		if _, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName()); err != nil {
			t.Errorf("%s not registered: %v", d.FullName(), err)
		}
	}
}

// The field numbers and types of the wire contract, exactly.
func TestWireContractFieldNumbers(t *testing.T) {
	type f struct {
		num  protowire.Number
		kind protoreflect.Kind
		list bool
	}
	S, B, I64, U32, BO, E, M := protoreflect.StringKind, protoreflect.BytesKind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.MessageKind
	contract := map[string]map[string]f{
		"MemoryBlob":  {"state_schema_version": {1, U32, false}, "entries": {2, M, true}, "total_value_bytes": {3, I64, false}},
		"MemoryEntry": {"key": {1, S, false}, "value": {2, B, false}, "last_access_ms": {3, I64, false}},
		"ToolIntent": {"intent_id": {1, S, false}, "entity_key": {2, B, false}, "seq": {3, I64, false}, "step_index": {4, U32, false},
			"tool_name": {5, S, false}, "args_json": {6, S, false}, "created_at_ms": {7, I64, false}, "expires_at_ms": {8, I64, false},
			"attempt": {9, U32, false}, "kind": {10, E, false}, "trace_id": {11, B, false}, "signature_scheme": {12, E, false},
			"signing_key_id": {13, S, false}, "signature": {14, B, false}},
		"ToolResult": {"intent_id": {1, S, false}, "entity_key": {2, B, false}, "seq": {3, I64, false}, "status": {4, E, false},
			"payload": {5, B, false}, "error_message": {6, S, false}, "completed_at_ms": {7, I64, false},
			"signature_scheme": {8, E, false}, "signing_key_id": {9, S, false}, "signature": {10, B, false}, "intent_digest": {11, B, false}},
		"TraceEvent": {"trace_id": {1, B, false}, "span_id": {2, B, false}, "parent_span_id": {3, B, false}, "entity_key": {4, B, false},
			"seq": {5, I64, false}, "step_index": {6, U32, false}, "event_type": {7, E, false}, "attributes": {8, M, true},
			"start_ms": {9, I64, false}, "end_ms": {10, I64, false}},
		"AgentEnvelope": {"entity_key": {1, B, false}, "event_time_ms": {2, I64, false}, "external_event": {3, B, false},
			"tool_result": {4, M, false}, "approval": {5, M, false}, "export_request": {6, M, false}, "signal": {7, M, false}, "budget_grant": {8, M, false}},
		"AgentEnvelope.Approval": {"intent_id": {1, S, false}, "approved": {2, BO, false}, "approver": {3, S, false}, "decided_at_ms": {4, I64, false},
			"signature_scheme": {5, E, false}, "signing_key_id": {6, S, false}, "signature": {7, B, false}, "intent_digest": {8, B, false}, "note": {9, S, false}, "args_json": {10, S, false}},
		"AgentEnvelope.Signal": {"name": {1, S, false}, "signal_id": {2, S, false}, "payload": {3, B, false}, "sender": {4, S, false},
			"sent_at_ms": {5, I64, false}, "entity_key": {6, B, false}, "signature_scheme": {7, E, false}, "signing_key_id": {8, S, false}, "signature": {9, B, false}},
		"AgentEnvelope.StateExportRequest": {"request_id": {1, S, false}},
		"StateSnapshot": {"state_schema_version": {1, U32, false}, "entity_key": {2, B, false}, "seq": {3, I64, false},
			"snapshot_at_ms": {4, I64, false}, "memory": {5, M, false}, "llm_cache": {6, M, false}, "continuation": {7, M, false},
			"pending": {8, M, true}, "request_id": {9, S, false}, "inbox": {10, M, true}},
		"ActivationErrorRecord": {"entity_key": {1, B, false}, "reason": {2, S, false}, "detail": {3, S, false}, "event_time_ms": {4, I64, false},
			"envelope": {5, B, false}, "raw_record": {6, B, false}},
		"Continuation": {"state_schema_version": {1, U32, false}, "seq": {2, I64, false}, "step_index": {3, U32, false},
			"pending_intent_ids": {4, S, true}, "adapter": {5, S, false}, "snapshot": {6, B, false}, "suspended_at_ms": {7, I64, false},
			"deadline_ms": {8, I64, false}, "escalations": {9, U32, false}, "wake_at_ms": {10, I64, false}, "awaiting_signal": {11, S, false},
			"agent": {12, S, false}},
		"LlmCacheBlob": {"state_schema_version": {1, U32, false}, "entries": {2, M, true}, "total_response_bytes": {3, I64, false}},
		"LlmCacheEntry": {"cache_key": {1, S, false}, "response": {2, B, false}, "response_digest": {3, B, false},
			"created_at_ms": {4, I64, false}, "last_access_ms": {5, I64, false}, "digest_only": {6, BO, false},
			"input_tokens": {7, I64, false}, "output_tokens": {8, I64, false}, "answered_by": {9, S, false}},
	}
	for msg, fields := range contract {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("beam_agents.v1." + msg))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		md := d.(protoreflect.MessageDescriptor)
		if md.Fields().Len() != len(fields) {
			t.Errorf("%s has %d fields, contract has %d", msg, md.Fields().Len(), len(fields))
		}
		for name, want := range fields {
			fd := md.Fields().ByName(protoreflect.Name(name))
			if fd == nil {
				t.Errorf("%s.%s missing", msg, name)
				continue
			}
			if fd.Number() != want.num || fd.Kind() != want.kind || (fd.IsList() || fd.IsMap()) != want.list {
				t.Errorf("%s.%s = #%d %v list=%v, contract #%d %v list=%v", msg, name, fd.Number(), fd.Kind(), fd.IsList(), want.num, want.kind, want.list)
			}
		}
	}
	attrs := (&pb.TraceEvent{}).ProtoReflect().Descriptor().Fields().ByName("attributes")
	if !attrs.IsMap() || attrs.MapKey().Kind() != S || attrs.MapValue().Kind() != S {
		t.Error("TraceEvent.attributes is not map<string, string>")
	}
	enums := map[string]map[string]protoreflect.EnumNumber{
		"ToolIntent.Kind":            {"TOOL_KIND_UNSPECIFIED": 0, "TOOL": 1, "APPROVAL": 2},
		"ToolIntent.SignatureScheme": {"SIGNATURE_SCHEME_UNSPECIFIED": 0, "HMAC_SHA256": 1},
		"ToolResult.Status":          {"STATUS_UNSPECIFIED": 0, "OK": 1, "ERROR": 2, "EXPIRED": 3, "REJECTED": 4},
		"TraceEvent.EventType": {"EVENT_TYPE_UNSPECIFIED": 0, "ACTIVATION_START": 1, "LLM_CALL": 2, "TOOL_CALL": 3,
			"INTENT_EMITTED": 4, "ACTIVATION_END": 5, "ERROR": 6, "SUSPENDED": 7},
	}
	for name, values := range enums {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("beam_agents.v1." + name))
		if err != nil {
			t.Fatal(err)
		}
		ed := d.(protoreflect.EnumDescriptor)
		if ed.Values().Len() != len(values) {
			t.Errorf("%s has %d values, contract %d", name, ed.Values().Len(), len(values))
		}
		for v, n := range values {
			if ev := ed.Values().ByName(protoreflect.Name(v)); ev == nil || ev.Number() != n {
				t.Errorf("%s.%s: %v, want %d", name, v, ev, n)
			}
		}
	}
}

func TestMemoryEntriesRoundTripInInsertionOrder(t *testing.T) {
	m := &pb.MemoryBlob{StateSchemaVersion: 1}
	for i, k := range []string{"a", "b", "c"} {
		m.Entries = append(m.Entries, &pb.MemoryEntry{Key: k, Value: []byte{byte(i), 0xff}, LastAccessMs: int64(100 - i)})
	}
	got := roundTrip(t, m)
	mustEqual(t, got, m)
	for i, k := range []string{"a", "b", "c"} {
		if got.Entries[i].Key != k {
			t.Fatalf("entry %d = %s, want %s", i, got.Entries[i].Key, k)
		}
	}
}

// The constructor half of this scenario (runtime code sets version 1) is statecodec's test.
func TestSchemaVersionZeroIsDistinguishable(t *testing.T) {
	pre := &pb.MemoryBlob{}
	if err := proto.Unmarshal([]byte{0x1a, 0x00}, pre); err != nil { // only entries, no version
		t.Fatal(err)
	}
	if pre.GetStateSchemaVersion() != 0 {
		t.Fatal("pre-versioned blob must read version 0")
	}
	if v := goldenMessage(t, "memory_blob.binpb").(*pb.MemoryBlob).GetStateSchemaVersion(); v != 1 {
		t.Fatalf("v1 golden reads version %d", v)
	}
}

func fullIntent() *pb.ToolIntent {
	return &pb.ToolIntent{
		IntentId: intent.ID([]byte{0, 1, 0xff}, 9, 4), EntityKey: []byte{0, 1, 0xff}, Seq: 9, StepIndex: 4,
		ToolName: "ship", ArgsJson: "{\"b\":\"2\",\"a\":\"\\u00e9 é\"}", CreatedAtMs: 1, ExpiresAtMs: 2, Attempt: 3,
		Kind: pb.ToolIntent_APPROVAL, TraceId: bytes.Repeat([]byte{0xab}, 16),
		SignatureScheme: pb.ToolIntent_HMAC_SHA256, SigningKeyId: "k", Signature: bytes.Repeat([]byte{0xcd}, 32),
	}
}

func TestToolIntentAllIdentityFieldsRoundTrip(t *testing.T) {
	m := fullIntent()
	got := roundTrip(t, m)
	mustEqual(t, got, m)
	if got.ArgsJson != m.ArgsJson || got.Kind != pb.ToolIntent_APPROVAL || !bytes.Equal(got.TraceId, m.TraceId) || len(got.TraceId) != 16 {
		t.Fatalf("identity fields changed: %v", got)
	}
}

func TestToolIntentExpiryIsRepresentable(t *testing.T) {
	if got := roundTrip(t, &pb.ToolIntent{ExpiresAtMs: 1767225900000}); got.GetExpiresAtMs() != 1767225900000 {
		t.Fatalf("expires_at_ms = %d", got.GetExpiresAtMs())
	}
}

func TestToolIntentWithoutTraceIDDecodes(t *testing.T) {
	got := goldenMessage(t, "tool_intent_kind.binpb").(*pb.ToolIntent)
	if len(got.GetTraceId()) != 0 {
		t.Fatalf("trace_id = %x, want empty", got.GetTraceId())
	}
	want := &pb.ToolIntent{}
	for _, c := range goldenv1.Cases() {
		if c.File == "tool_intent_kind.binpb" {
			want = c.Build().(*pb.ToolIntent)
		}
	}
	mustEqual(t, got, want)
}

func TestApprovalIntentsAreDistinguishable(t *testing.T) {
	got := roundTrip(t, &pb.ToolIntent{ToolName: "refund", Kind: pb.ToolIntent_APPROVAL})
	if !intent.RoutesToApproval(got) || intent.RoutesToApproval(roundTrip(t, &pb.ToolIntent{ToolName: "refund", Kind: pb.ToolIntent_TOOL})) {
		t.Fatal("APPROVAL and TOOL intents with the same tool_name are not told apart by kind")
	}
}

func TestIntentBeforeKindReadsAsToolCall(t *testing.T) {
	got := goldenMessage(t, "tool_intent.binpb").(*pb.ToolIntent)
	if got.GetKind() != pb.ToolIntent_TOOL_KIND_UNSPECIFIED || intent.RoutesToApproval(got) {
		t.Fatalf("pre-kind intent: kind %v, approval=%v", got.GetKind(), intent.RoutesToApproval(got))
	}
}

func TestSignatureFieldsRoundTrip(t *testing.T) {
	m := fullIntent()
	got := roundTrip(t, m)
	if got.SignatureScheme != pb.ToolIntent_HMAC_SHA256 || got.SigningKeyId != "k" || !bytes.Equal(got.Signature, m.Signature) {
		t.Fatalf("signature envelope changed: %v", got)
	}
}

func TestPreSignatureIntentDecodesAsUnsigned(t *testing.T) {
	kr := goldenRing(t)
	for _, name := range []string{"tool_intent.binpb", "tool_intent_kind.binpb", "tool_intent_trace_id.binpb"} {
		got := goldenMessage(t, name).(*pb.ToolIntent)
		if got.GetSignatureScheme() != pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED || len(got.GetSignature()) != 0 {
			t.Fatalf("%s: signature fields set", name)
		}
		if o := intent.Verify(got, kr); o != intent.Unsigned {
			t.Fatalf("%s: Verify = %v, want unsigned", name, o)
		}
	}
	if o := intent.Verify(goldenMessage(t, "tool_intent_signed.binpb").(*pb.ToolIntent), kr); o != intent.OK {
		t.Fatalf("signed golden: %v", o)
	}
}

// The signed golden result and decision verify against the intents they are bound to, and
// against no other; the results and decisions written before the envelope decode as unsigned.
func TestSignedAnswersVerify(t *testing.T) {
	kr := goldenRing(t)
	signedIntent := goldenMessage(t, "tool_intent_signed.binpb").(*pb.ToolIntent)
	approvalIntent := goldenMessage(t, "tool_intent_kind.binpb").(*pb.ToolIntent)
	r := goldenMessage(t, "tool_result_signed.binpb").(*pb.ToolResult)
	if o := intent.VerifyResult(r, signedIntent, kr); o != intent.OK {
		t.Fatalf("signed result: %v", o)
	}
	if o := intent.VerifyResult(r, approvalIntent, kr); o != intent.BindingMismatch {
		t.Fatalf("signed result against another intent with its id: %v", o)
	}
	ap := goldenMessage(t, "agent_envelope_approval_signed.binpb").(*pb.AgentEnvelope).GetApproval()
	if o := intent.VerifyApproval(ap, approvalIntent, kr); o != intent.OK {
		t.Fatalf("signed approval: %v", o)
	}
	if o := intent.VerifyApproval(ap, signedIntent, kr); o != intent.BindingMismatch {
		t.Fatalf("signed approval against another intent with its id: %v", o)
	}
	if o := intent.VerifyResult(goldenMessage(t, "tool_result.binpb").(*pb.ToolResult), signedIntent, kr); o != intent.Unsigned {
		t.Fatalf("pre-signature result: %v", o)
	}
	if o := intent.VerifyApproval(goldenMessage(t, "agent_envelope_approval.binpb").(*pb.AgentEnvelope).GetApproval(), approvalIntent, kr); o != intent.Unsigned {
		t.Fatalf("pre-signature approval: %v", o)
	}
}

func goldenRing(t *testing.T) *intent.Keyring {
	kr, err := intent.NewKeyring(goldenv1.SigningKeyID, map[string][]byte{goldenv1.SigningKeyID: goldenv1.SigningKey})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// A signer on newer bindings that know field 15 and a verifier on ours, which keep it as an
// unknown field, compute the same signing input.
func TestFutureFieldIntentYieldsStableSigningInput(t *testing.T) {
	newer := olderBindings(t, "ToolIntent", func(fdp *descriptorpb.FileDescriptorProto) {
		m := messageProto(fdp, "ToolIntent")
		m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{
			Name: proto.String("future_note"), JsonName: proto.String("futureNote"), Number: proto.Int32(goldenv1.FutureFieldNumber),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
		})
	})
	blob := goldenBlob(t, "tool_intent_future_field.binpb")

	// The newer signer's view: field 15 is known.
	signer := newer.New()
	if err := proto.Unmarshal(blob, signer.Interface()); err != nil {
		t.Fatal(err)
	}
	if len(signer.GetUnknown()) != 0 || signer.Get(signer.Descriptor().Fields().ByNumber(goldenv1.FutureFieldNumber)).String() != goldenv1.FutureFieldValue {
		t.Fatal("newer bindings do not see field 15 as known")
	}
	for _, n := range []protowire.Number{12, 13, 14} {
		signer.Clear(signer.Descriptor().Fields().ByNumber(n))
	}
	signerInput, err := proto.MarshalOptions{Deterministic: true}.Marshal(signer.Interface())
	if err != nil {
		t.Fatal(err)
	}

	// Our view: decode, keep field 15 unknown, re-encode.
	ours := &pb.ToolIntent{}
	if err := proto.Unmarshal(blob, ours); err != nil {
		t.Fatal(err)
	}
	if len(ours.ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("field 15 was not kept as unknown")
	}
	reencoded, _ := proto.Marshal(ours)
	again := &pb.ToolIntent{}
	if err := proto.Unmarshal(reencoded, again); err != nil {
		t.Fatal(err)
	}
	ourInput, err := intent.SigningInput(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ourInput, signerInput) {
		t.Fatalf("signing inputs differ:\nours   %x\nsigner %x", ourInput, signerInput)
	}
	h := hmac.New(sha256.New, goldenv1.SigningKey)
	h.Write(signerInput)
	if !bytes.Equal(h.Sum(nil), again.GetSignature()) {
		t.Fatal("the golden signature is not the HMAC of the newer signer's input")
	}
	if o := intent.Verify(again, goldenRing(t)); o != intent.OK {
		t.Fatalf("Verify after decode/re-encode = %v", o)
	}
}

func TestToolResultEveryStatusIsRepresentable(t *testing.T) {
	for n := range pb.ToolResult_Status_name {
		s := pb.ToolResult_Status(n)
		if got := roundTrip(t, &pb.ToolResult{IntentId: "i", Status: s}); got.Status != s {
			t.Fatalf("status %v read back as %v", s, got.Status)
		}
	}
	if (&pb.ToolResult{}).GetStatus() != pb.ToolResult_STATUS_UNSPECIFIED {
		t.Fatal("unset status is not STATUS_UNSPECIFIED")
	}
}

func TestGenAIAttributesSurviveRoundTrip(t *testing.T) {
	m := goldenMessage(t, "trace_event.binpb").(*pb.TraceEvent)
	got := roundTrip(t, m)
	if len(got.Attributes) != 4 || got.Attributes["gen_ai.request.model"] != "scripted-1" || got.Attributes["gen_ai.usage.input_tokens"] != "412" {
		t.Fatalf("attributes = %v", got.Attributes)
	}
	mustEqual(t, got, m)
}

func TestCorrelationIdentifiersRoundTripAtWireWidths(t *testing.T) {
	m := &pb.TraceEvent{TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), ParentSpanId: bytes.Repeat([]byte{3}, 8)}
	got := roundTrip(t, m)
	if !bytes.Equal(got.TraceId, m.TraceId) || len(got.TraceId) != 16 || len(got.SpanId) != 8 || len(got.ParentSpanId) != 8 ||
		!bytes.Equal(got.SpanId, m.SpanId) || !bytes.Equal(got.ParentSpanId, m.ParentSpanId) {
		t.Fatalf("ids changed: %v", got)
	}
}

func TestSuspensionEventTypeRoundTrips(t *testing.T) {
	got := goldenMessage(t, "trace_event_suspended.binpb").(*pb.TraceEvent)
	if got.EventType != pb.TraceEvent_SUSPENDED {
		t.Fatalf("event_type = %v", got.EventType)
	}
	older := olderBindings(t, "TraceEvent", func(fdp *descriptorpb.FileDescriptorProto) {
		for _, e := range messageProto(fdp, "TraceEvent").EnumType {
			e.Value = e.Value[:len(e.Value)-1] // drop SUSPENDED
		}
	}).New()
	if err := proto.Unmarshal(goldenBlob(t, "trace_event_suspended.binpb"), older.Interface()); err != nil {
		t.Fatalf("older bindings failed to parse: %v", err)
	}
	fd := older.Descriptor().Fields().ByName("event_type")
	if fd.Enum().Values().ByNumber(7) != nil {
		t.Fatal("older bindings still know SUSPENDED")
	}
	if n := older.Get(fd).Enum(); n != 7 {
		t.Fatalf("older bindings read event_type %d, want the unrecognized number 7", n)
	}
}

func TestContinuationSuspensionStateRoundTrips(t *testing.T) {
	m := &pb.Continuation{StateSchemaVersion: 1, Seq: 4, StepIndex: 2, PendingIntentIds: []string{"x", "y", "z"},
		Adapter: "a", Snapshot: []byte{0, 0xff, 1}, SuspendedAtMs: 10, DeadlineMs: 20}
	got := roundTrip(t, m)
	mustEqual(t, got, m)
	if !bytes.Equal(got.Snapshot, m.Snapshot) {
		t.Fatal("snapshot bytes changed")
	}
}

func TestEscalationCountRoundTripsAndDefaultsToZero(t *testing.T) {
	if e := goldenMessage(t, "continuation.binpb").(*pb.Continuation).GetEscalations(); e != 0 {
		t.Fatalf("pre-escalations blob reads %d", e)
	}
	if e := goldenMessage(t, "continuation_escalations.binpb").(*pb.Continuation).GetEscalations(); e != 2 {
		t.Fatalf("escalations blob reads %d", e)
	}
	if got := roundTrip(t, &pb.Continuation{Escalations: 4294967295}); got.Escalations != 4294967295 {
		t.Fatal("escalations not preserved")
	}
}

func TestCacheEntriesRoundTripInInsertionOrder(t *testing.T) {
	m := goldenMessage(t, "llm_cache_blob.binpb").(*pb.LlmCacheBlob)
	got := roundTrip(t, m)
	mustEqual(t, got, m)
	for i, k := range []string{"a", "b", "c"} {
		if got.Entries[i].CacheKey != k {
			t.Fatalf("entry %d = %s", i, got.Entries[i].CacheKey)
		}
	}
}

func TestDigestOnlyEntriesAreRepresentable(t *testing.T) {
	e := &pb.LlmCacheEntry{CacheKey: "d", DigestOnly: true, ResponseDigest: bytes.Repeat([]byte{9}, 32)}
	got := roundTrip(t, &pb.LlmCacheBlob{Entries: []*pb.LlmCacheEntry{e}}).Entries[0]
	if !got.DigestOnly || len(got.Response) != 0 || !bytes.Equal(got.ResponseDigest, e.ResponseDigest) {
		t.Fatalf("digest-only entry changed: %v", got)
	}
}

func withUnknown(t *testing.T, name string) []byte {
	b := goldenBlob(t, name)
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	return protowire.AppendString(b, "from-the-future")
}

func TestUnknownFieldsAreToleratedOnDecode(t *testing.T) {
	for _, c := range goldenv1.Cases() {
		want := c.Build()
		got := want.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(withUnknown(t, c.File), got); err != nil {
			t.Fatalf("%s: %v", c.File, err)
		}
		got.ProtoReflect().SetUnknown(nil)
		want.ProtoReflect().SetUnknown(nil)
		mustEqual(t, got, want)
	}
}

func TestUnknownFieldsSurviveReencode(t *testing.T) {
	for _, c := range goldenv1.Cases() {
		m := c.Build().ProtoReflect().New().Interface()
		if err := proto.Unmarshal(withUnknown(t, c.File), m); err != nil {
			t.Fatal(err)
		}
		out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte("from-the-future")) {
			t.Fatalf("%s: re-encode dropped the unknown field", c.File)
		}
	}
}

func TestActivationErrorRecordAllFieldsRoundTrip(t *testing.T) {
	m := &pb.ActivationErrorRecord{EntityKey: []byte("k"), Reason: "orphaned_result", Detail: "d", EventTimeMs: -5}
	mustEqual(t, roundTrip(t, m), m)
}

func TestDeterministicSerializationIsByteStable(t *testing.T) {
	for _, c := range goldenv1.Cases() {
		a, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c.Build())
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c.Build())
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: two deterministic serializations differ", c.File)
		}
	}
}

func TestExactlyOnePayloadVariantIsSet(t *testing.T) {
	env := &pb.AgentEnvelope{Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: "i"}}}
	env.Payload = &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{IntentId: "i"}}
	if env.GetToolResult() != nil || env.GetApproval() == nil {
		t.Fatal("oneof is not exclusive")
	}
	m := env.ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("payload")
	if od.Fields().Len() != 5 || m.WhichOneof(od).Name() != "approval" {
		t.Fatalf("payload oneof: %d variants, set %v", od.Fields().Len(), m.WhichOneof(od))
	}
	// On the wire, the last variant wins as well.
	var b []byte
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, nil)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, nil)
	got := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(b, got); err != nil || got.GetApproval() == nil || got.GetToolResult() != nil {
		t.Fatalf("wire oneof: %v %v", got, err)
	}
}

func TestAllFourVariantsRoundTrip(t *testing.T) {
	for _, name := range []string{"agent_envelope.binpb", "agent_envelope_tool_result.binpb", "agent_envelope_approval.binpb", "agent_envelope_export_request.binpb"} {
		m := goldenMessage(t, name).(*pb.AgentEnvelope)
		got := roundTrip(t, m)
		mustEqual(t, got, m)
		od := m.ProtoReflect().Descriptor().Oneofs().ByName("payload")
		if got.ProtoReflect().WhichOneof(od) == nil || got.ProtoReflect().WhichOneof(od) != m.ProtoReflect().WhichOneof(od) {
			t.Fatalf("%s: oneof case changed", name)
		}
	}
}

func TestEnvelopeBeforeExportRequestStillDecodes(t *testing.T) {
	mustEqual(t, goldenMessage(t, "agent_envelope.binpb"), func() proto.Message {
		for _, c := range goldenv1.Cases() {
			if c.File == "agent_envelope.binpb" {
				return c.Build()
			}
		}
		return nil
	}())
	// A reader predating the variant sees it as an unknown field, not a parse failure.
	older := olderBindings(t, "AgentEnvelope", func(fdp *descriptorpb.FileDescriptorProto) {
		m := messageProto(fdp, "AgentEnvelope")
		m.Field = slices.DeleteFunc(m.Field, func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetNumber() >= 6 })
	}).New()
	if err := proto.Unmarshal(goldenBlob(t, "agent_envelope_export_request.binpb"), older.Interface()); err != nil {
		t.Fatal(err)
	}
	if len(older.GetUnknown()) == 0 {
		t.Fatal("older bindings did not keep export_request as an unknown field")
	}
}

func TestPopulatedSnapshotRoundTrips(t *testing.T) {
	m := goldenMessage(t, "state_snapshot.binpb").(*pb.StateSnapshot)
	got := roundTrip(t, m)
	mustEqual(t, got, m)
	if len(got.Pending) != 2 || got.Memory.Entries[2].Key != "c" || got.LlmCache.Entries[0].CacheKey != "a" {
		t.Fatal("snapshot lost order")
	}
}

func TestEmbeddedBlobsKeepTheirOwnSchemaVersions(t *testing.T) {
	m := &pb.StateSnapshot{StateSchemaVersion: 1, Memory: &pb.MemoryBlob{StateSchemaVersion: 0, Entries: []*pb.MemoryEntry{{Key: "x"}}},
		LlmCache: &pb.LlmCacheBlob{StateSchemaVersion: 3}}
	got := roundTrip(t, m)
	if got.Memory.GetStateSchemaVersion() != 0 || got.LlmCache.GetStateSchemaVersion() != 3 {
		t.Fatalf("embedded versions changed: %v", got)
	}
}
