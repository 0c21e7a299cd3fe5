package goldenv1

import (
	"encoding/hex"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Version is the state_schema_version regime of this corpus.
const Version = 1

// SigningKeyID and SigningKey sign the golden intents. Test material only.
const SigningKeyID = "golden-v1"

// SigningKey is the 32-byte HMAC-SHA256 key of the signed golden intents.
var SigningKey = []byte("beamagents-golden-v1-hmac-key-32")

// A Case is one golden blob: its file name in this directory, what it pins, and the builder
// of its expected value.
type Case struct {
	File  string
	Pins  string
	Build func() proto.Message
}

// Cases lists the corpus in a fixed order.
func Cases() []Case {
	return []Case{
		{"memory_blob.binpb", "MemoryBlob v1 with entries a, b, c in LRU order and their exact total", memoryBlob},
		{"tool_intent.binpb", "ToolIntent fields 1-9, written before kind, trace_id and the signature envelope existed", toolIntent},
		{"tool_intent_kind.binpb", "ToolIntent kind = APPROVAL (field 10), written before trace_id", toolIntentKind},
		{"tool_intent_trace_id.binpb", "ToolIntent trace_id (field 11, 16 bytes), written before the signature envelope", toolIntentTraceID},
		{"tool_intent_signed.binpb", "ToolIntent signature envelope (fields 12-14): HMAC_SHA256 by golden-v1 over the cleared-fields serialization", toolIntentSigned},
		{"tool_intent_future_field.binpb", "ToolIntent carrying unknown field 15 (string) that was present when it was signed", toolIntentFutureField},
		{"tool_result.binpb", "ToolResult with every field, status ERROR", toolResult},
		{"trace_event.binpb", "TraceEvent LLM_CALL with 16/8/8-byte ids and GenAI attributes in the map", traceEvent},
		{"trace_event_suspended.binpb", "TraceEvent event_type SUSPENDED (7), added within v1", traceEventSuspended},
		{"agent_envelope.binpb", "AgentEnvelope with external_event bytes", envelopeExternal},
		{"agent_envelope_tool_result.binpb", "AgentEnvelope with a tool_result payload", envelopeToolResult},
		{"agent_envelope_approval.binpb", "AgentEnvelope with an approval payload", envelopeApproval},
		{"agent_envelope_export_request.binpb", "AgentEnvelope export_request variant (field 6), added within v1", envelopeExport},
		{"continuation.binpb", "Continuation v1 with two pending ids and a snapshot, written before escalations", continuation},
		{"continuation_escalations.binpb", "Continuation escalations = 2 (field 9), added within v1", continuationEscalations},
		{"llm_cache_blob.binpb", "LlmCacheBlob v1 with entries a, b, c in LRU order", llmCacheBlob},
		{"llm_cache_blob_digest_only.binpb", "LlmCacheBlob with a digest-only entry (empty response, 32-byte digest)", llmCacheBlobDigestOnly},
		{"activation_error_record.binpb", "ActivationErrorRecord with every field, added within v1", activationErrorRecord},
		{"state_snapshot.binpb", "StateSnapshot with memory, cache, continuation and two pending intents, added within v1", stateSnapshot},
		{"activation_error_record_envelope.binpb", "ActivationErrorRecord carrying its failed envelope (field 5, oneof failed_input), added within v1", activationErrorRecordEnvelope},
		{"tool_result_signed.binpb", "ToolResult signature envelope (fields 8-10) and intent_digest (11), added within v1: HMAC_SHA256 by golden-v1, bound to the intent of tool_intent_signed.binpb", toolResultSigned},
		{"handler_journal.binpb", "HandlerJournal v1 (journal_version 1): the trigger, budgets and five journaled operations, a TOOL answered and an APPROVAL pending, added within v1", handlerJournal},
		{"continuation_handler_journal.binpb", "Continuation of a suspended handler activation: adapter beamagents.agent.handler.v1 with a HandlerJournal snapshot, added within v1", continuationHandlerJournal},
		{"agent_envelope_approval_signed.binpb", "AgentEnvelope.Approval signature envelope (fields 5-7) and intent_digest (8), added within v1: HMAC_SHA256 by golden-v1, bound to the APPROVAL intent of tool_intent_kind.binpb", envelopeApprovalSigned},
		{"agent_envelope_approval_args.binpb", "AgentEnvelope.Approval with a note (9) and edited args_json (10), added within v1", envelopeApprovalArgs},
		{"agent_envelope_signal.binpb", "AgentEnvelope signal variant (field 7): name, id, payload, sender, sent_at_ms and entity_key, unsigned, added within v1", envelopeSignal},
		{"agent_envelope_signal_signed.binpb", "AgentEnvelope.Signal signature envelope (fields 7-9), added within v1: HMAC_SHA256 by golden-v1 over the signal with those fields cleared", envelopeSignalSigned},
		{"handler_journal_waits.binpb", "HandlerJournal with a TIMER (op 10, at_ms 11) that fired and an AWAIT (op 11) answered by a signal (field 10), then an AWAIT pending, added within v1", handlerJournalWaits},
		{"continuation_waiting.binpb", "Continuation of a handler waiting for a signal until a wake time: wake_at_ms (10) = deadline_ms, awaiting_signal (11), no pending intent, added within v1", continuationWaiting},
		{"handler_journal_ltm.binpb", "HandlerJournal with a long-term memory read (LTM_RECALL, op 12) that found its entry and a write (LTM_REMEMBER, op 13), added within v1", handlerJournalLTM},
		{"ledger_entry.binpb", "LedgerEntry of trace_event.binpb's model call for tenant acme, agent support version 2026-12, priced at 2.5 and 10 per million input and output tokens, added within v1", ledgerEntry},
	}
}

const t0 = int64(1767225600000) // 2026-01-01T00:00:00Z

var (
	entityKey = []byte("customer-0042")
	traceID   = []byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}
	spanID    = []byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17}
	parentID  = []byte{0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27}
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func memoryBlob() proto.Message {
	return &pb.MemoryBlob{
		StateSchemaVersion: 1,
		Entries: []*pb.MemoryEntry{
			{Key: "a", Value: []byte("alpha"), LastAccessMs: t0 + 1000},
			{Key: "b", Value: []byte("bravo!"), LastAccessMs: t0 + 2000},
			{Key: "c", Value: []byte("charlie"), LastAccessMs: t0 + 3000},
		},
		TotalValueBytes: 18,
	}
}

// toolIntentBase is the intent as the schema stood before field 10.
func toolIntentBase() *pb.ToolIntent {
	return &pb.ToolIntent{
		// intent.ID("customer-0042", 7, 2)
		IntentId:    "41eabd0e-cb84-5a21-a5a2-6b62478d30f4",
		EntityKey:   entityKey,
		Seq:         7,
		StepIndex:   2,
		ToolName:    "refund",
		ArgsJson:    `{"amount":"12","currency":"EUR","order_id":"A-1001"}`,
		CreatedAtMs: t0 + 5000,
		ExpiresAtMs: t0 + 305000,
		Attempt:     1,
	}
}

func toolIntent() proto.Message { return toolIntentBase() }

func toolIntentKind() proto.Message {
	m := toolIntentBase()
	m.Kind = pb.ToolIntent_APPROVAL
	return m
}

func toolIntentTraceIDMsg() *pb.ToolIntent {
	m := toolIntentBase()
	m.Kind = pb.ToolIntent_TOOL
	m.TraceId = traceID
	return m
}

func toolIntentTraceID() proto.Message { return toolIntentTraceIDMsg() }

func toolIntentSigned() proto.Message {
	m := toolIntentTraceIDMsg()
	m.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	m.SigningKeyId = SigningKeyID
	m.Signature = mustHex(signedSignature)
	return m
}

// FutureFieldNumber and FutureFieldValue are the unknown field the future-field intent carries.
const (
	FutureFieldNumber = 15
	FutureFieldValue  = "added-by-a-newer-schema"
)

func toolIntentFutureField() proto.Message {
	m := toolIntentTraceIDMsg()
	m.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, FutureFieldNumber, protowire.BytesType), FutureFieldValue))
	m.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	m.SigningKeyId = SigningKeyID
	m.Signature = mustHex(futureFieldSignature)
	return m
}

const (
	signedSignature      = "2a09cd1a1cc5d3339381a9f1f44e3fea7ce824b47a74a9056d945fc9a0049214"
	futureFieldSignature = "f8ed881deb2cc984a8f0e9b9ec6732ba6dea8bd577a857ea0a12fc854a6d5b60"
)

func toolResultMsg() *pb.ToolResult {
	return &pb.ToolResult{
		IntentId:      "41eabd0e-cb84-5a21-a5a2-6b62478d30f4",
		EntityKey:     entityKey,
		Seq:           7,
		Status:        pb.ToolResult_ERROR,
		Payload:       []byte(`{"refund_id":null}`),
		ErrorMessage:  "payment provider unavailable",
		CompletedAtMs: t0 + 9000,
	}
}

func toolResult() proto.Message { return toolResultMsg() }

// The content digests (SHA-256 of the intent's signing input with attempt and expires_at_ms
// cleared) and signatures of the signed result and decision, and the signed signal's.
const (
	resultIntentDigest   = "400d4a2fb9754de7c80eafc7598c6edb1c7e1858da85b2878e9be2cbd245454d"
	resultSignature      = "b0197b5a034dd1b3a66628a8fee2009a5c23b646c1e84c70652e22b4c89f42b5"
	approvalIntentDigest = "c2f92257c1a35d50f392368fb7dbbed96e3f4b6c34c8a78aa897e624874c28dc"
	approvalSignature    = "1fbb9a2f68d0079152dd7c3dbf6ebd6203da45c3f8beeb31298d09d1ca7779ed"
	signalSignature      = "a892207faa8eff67964e96dd1e06a0acd006f2517bb339f2f54e8fe97991e3a6"
)

func toolResultSigned() proto.Message {
	m := toolResultMsg()
	m.IntentDigest = mustHex(resultIntentDigest)
	m.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	m.SigningKeyId = SigningKeyID
	m.Signature = mustHex(resultSignature)
	return m
}

func traceEventMsg() *pb.TraceEvent {
	return &pb.TraceEvent{
		TraceId:      traceID,
		SpanId:       spanID,
		ParentSpanId: parentID,
		EntityKey:    entityKey,
		Seq:          7,
		StepIndex:    1,
		EventType:    pb.TraceEvent_LLM_CALL,
		Attributes: map[string]string{
			"gen_ai.operation.name":      "chat",
			"gen_ai.request.model":       "scripted-1",
			"gen_ai.usage.input_tokens":  "412",
			"gen_ai.usage.output_tokens": "57",
		},
		StartMs: t0 + 1000,
		EndMs:   t0 + 1850,
	}
}

func traceEvent() proto.Message { return traceEventMsg() }

func traceEventSuspended() proto.Message {
	m := traceEventMsg()
	m.EventType = pb.TraceEvent_SUSPENDED
	m.Attributes = map[string]string{"beamagents.pending_intents": "1"}
	return m
}

func envelopeExternal() proto.Message {
	return &pb.AgentEnvelope{
		EntityKey:   entityKey,
		EventTimeMs: t0,
		Payload:     &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(`{"text":"where is my refund?"}`)},
	}
}

func envelopeToolResult() proto.Message {
	return &pb.AgentEnvelope{
		EntityKey:   entityKey,
		EventTimeMs: t0 + 9000,
		Payload:     &pb.AgentEnvelope_ToolResult{ToolResult: toolResultMsg()},
	}
}

func envelopeApproval() proto.Message {
	return &pb.AgentEnvelope{
		EntityKey:   entityKey,
		EventTimeMs: t0 + 60000,
		Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{
			IntentId:    "41eabd0e-cb84-5a21-a5a2-6b62478d30f4",
			Approved:    true,
			Approver:    "ops@example.com",
			DecidedAtMs: t0 + 59000,
		}},
	}
}

func envelopeApprovalSigned() proto.Message {
	m := envelopeApproval().(*pb.AgentEnvelope)
	ap := m.GetApproval()
	ap.IntentDigest = mustHex(approvalIntentDigest)
	ap.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	ap.SigningKeyId = SigningKeyID
	ap.Signature = mustHex(approvalSignature)
	return m
}

func envelopeExport() proto.Message {
	return &pb.AgentEnvelope{
		EntityKey:   entityKey,
		EventTimeMs: t0 + 120000,
		Payload:     &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "export-0001"}},
	}
}

func continuationMsg() *pb.Continuation {
	return &pb.Continuation{
		StateSchemaVersion: 1,
		Seq:                7,
		StepIndex:          2,
		PendingIntentIds:   []string{"41eabd0e-cb84-5a21-a5a2-6b62478d30f4", "0b5c3d2e-1f00-5a00-8000-000000000002"},
		Adapter:            "beamagents.agent.v1",
		Snapshot:           []byte{0x0a, 0x03, 'r', 'e', 'f', 0x00, 0xff},
		SuspendedAtMs:      t0 + 5000,
		DeadlineMs:         t0 + 305000,
	}
}

func continuation() proto.Message { return continuationMsg() }

func continuationEscalations() proto.Message {
	m := continuationMsg()
	m.Escalations = 2
	return m
}

func llmCacheBlobMsg() *pb.LlmCacheBlob {
	return &pb.LlmCacheBlob{
		StateSchemaVersion: 1,
		Entries: []*pb.LlmCacheEntry{
			{CacheKey: "a", Response: []byte("r-alpha"), ResponseDigest: mustHex("2b57ef3b0b5b3e2f9e2c1a7e2f3f1cbd6d1f3c2a9b7e8d6c5b4a392817161514"), CreatedAtMs: t0 + 100, LastAccessMs: t0 + 1100},
			{CacheKey: "b", Response: []byte("r-bravo"), ResponseDigest: mustHex("0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000"), CreatedAtMs: t0 + 200, LastAccessMs: t0 + 1200},
			{CacheKey: "c", Response: []byte("r-charlie"), ResponseDigest: mustHex("ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"), CreatedAtMs: t0 + 300, LastAccessMs: t0 + 1300},
		},
		TotalResponseBytes: 23,
	}
}

func llmCacheBlob() proto.Message { return llmCacheBlobMsg() }

func llmCacheBlobDigestOnly() proto.Message {
	m := llmCacheBlobMsg()
	m.Entries = append(m.Entries, &pb.LlmCacheEntry{
		CacheKey:       "d",
		ResponseDigest: mustHex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0"),
		CreatedAtMs:    t0 + 400,
		LastAccessMs:   t0 + 1400,
		DigestOnly:     true,
	})
	return m
}

func activationErrorRecord() proto.Message {
	return &pb.ActivationErrorRecord{
		EntityKey:   entityKey,
		Reason:      "proposal_refused",
		Detail:      "SPX-Z206 value.fields.unknown: $.value.fields[\"x.extra\"]",
		EventTimeMs: t0 + 7000,
	}
}

func activationErrorRecordEnvelope() proto.Message {
	env, _ := proto.MarshalOptions{Deterministic: true}.Marshal(envelopeExternal())
	return &pb.ActivationErrorRecord{
		EntityKey:   entityKey,
		Reason:      "model_error",
		Detail:      "model_error: step 0: provider unavailable",
		EventTimeMs: t0,
		FailedInput: &pb.ActivationErrorRecord_Envelope{Envelope: env},
	}
}

func stateSnapshot() proto.Message {
	pending2 := toolIntentTraceIDMsg()
	pending2.IntentId = "0b5c3d2e-1f00-5a00-8000-000000000002"
	pending2.StepIndex = 3
	pending2.Kind = pb.ToolIntent_APPROVAL
	return &pb.StateSnapshot{
		StateSchemaVersion: 1,
		EntityKey:          entityKey,
		Seq:                8,
		SnapshotAtMs:       t0 + 120000,
		Memory:             memoryBlob().(*pb.MemoryBlob),
		LlmCache:           llmCacheBlobMsg(),
		Continuation:       continuationMsg(),
		Pending:            []*pb.ToolIntent{toolIntentSigned().(*pb.ToolIntent), pending2},
		RequestId:          "export-0001",
	}
}

func handlerJournalMsg() *pb.HandlerJournal {
	trigger := envelopeExternal().(*pb.AgentEnvelope)
	result := toolResultMsg()
	result.Status = pb.ToolResult_OK
	return &pb.HandlerJournal{
		JournalVersion: 1,
		Trigger:        trigger,
		TraceId:        traceID,
		ModelCalls:     1,
		Tokens:         130,
		Entries: []*pb.JournalEntry{
			{Op: pb.JournalEntry_MEMORY_GET, Name: "readings", ArgsDigest: mustHex("6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7e0e7d3a1"), Result: []byte{0x02, 'o', 'k'}, Found: true},
			{Op: pb.JournalEntry_CHAT, ArgsDigest: mustHex("3b5d5c3712955042212316173ccf37be800d2d2e9c4e1f4a0c76a0e6b1a8c512"), Result: []byte(`{"turn":"beamagents.model.turn.v1","text":"","tool_calls":[]}`)},
			{Op: pb.JournalEntry_INLINE, Name: "devices.lookup", ArgsDigest: mustHex("ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"), Error: "no such device"},
			{Op: pb.JournalEntry_TOOL, Name: "devices.dispatch", ArgsDigest: mustHex("3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"), IntentId: "41eabd0e-cb84-5a21-a5a2-6b62478d30f4", ToolResult: result},
			{Op: pb.JournalEntry_APPROVAL, Name: "devices.dispatch", ArgsDigest: mustHex("2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6"), IntentId: "0b5c3d2e-1f00-5a00-8000-000000000002"},
		},
	}
}

func handlerJournal() proto.Message { return handlerJournalMsg() }

func continuationHandlerJournal() proto.Message {
	m := continuationMsg()
	m.Adapter = "beamagents.agent.handler.v1"
	m.PendingIntentIds = []string{"0b5c3d2e-1f00-5a00-8000-000000000002"}
	m.StepIndex = 4
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(handlerJournalMsg())
	if err != nil {
		panic(err)
	}
	m.Snapshot = snap
	return m
}

func envelopeApprovalArgs() proto.Message {
	m := envelopeApproval().(*pb.AgentEnvelope)
	ap := m.GetApproval()
	ap.Note = "approved at a lower amount"
	ap.ArgsJson = `{"order_id":"A-1042","amount":"200"}`
	return m
}

func signalMsg() *pb.AgentEnvelope_Signal {
	return &pb.AgentEnvelope_Signal{
		Name:      "shipment.arrived",
		SignalId:  "ship-0077",
		Payload:   []byte(`{"dock":4}`),
		Sender:    "warehouse@example.com",
		SentAtMs:  t0 + 179000,
		EntityKey: entityKey,
	}
}

func envelopeSignal() proto.Message {
	return &pb.AgentEnvelope{EntityKey: entityKey, EventTimeMs: t0 + 180000, Payload: &pb.AgentEnvelope_Signal_{Signal: signalMsg()}}
}

func envelopeSignalSigned() proto.Message {
	m := envelopeSignal().(*pb.AgentEnvelope)
	sig := m.GetSignal()
	sig.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	sig.SigningKeyId = SigningKeyID
	sig.Signature = mustHex(signalSignature)
	return m
}

func handlerJournalWaitsMsg() *pb.HandlerJournal {
	return &pb.HandlerJournal{
		JournalVersion: 1,
		Trigger:        envelopeExternal().(*pb.AgentEnvelope),
		TraceId:        traceID,
		Entries: []*pb.JournalEntry{
			{Op: pb.JournalEntry_TIMER, Name: "sleep", ArgsDigest: mustHex("cd94ec90364da372eb1a980c7ffb36e5654d7e2cd92cb810be418adb36fe2434"), Found: true, AtMs: t0 + 60000},
			{Op: pb.JournalEntry_AWAIT, Name: "shipment.arrived", ArgsDigest: mustHex("1aefe47e20eb91fa38a580d86fd70270a598528609b2954d29284b1bda51ebdd"), Found: true, Signal: signalMsg()},
			{Op: pb.JournalEntry_AWAIT, Name: "shipment.signed", ArgsDigest: mustHex("6cae44c012116a57dd77293f8f2b98e14ffce4db98701b5455a3925354814591"), AtMs: t0 + 3600000},
		},
	}
}

func handlerJournalWaits() proto.Message { return handlerJournalWaitsMsg() }

func handlerJournalLTM() proto.Message {
	return &pb.HandlerJournal{
		JournalVersion: 1,
		Trigger:        envelopeExternal().(*pb.AgentEnvelope),
		TraceId:        traceID,
		Entries: []*pb.JournalEntry{
			{Op: pb.JournalEntry_LTM_RECALL, Name: "tone", ArgsDigest: mustHex("e6506ee304de5a218a2fd8b1a0b0d08ee04c4b2cc8544daa62b43f194c5d1862"), Result: []byte("formal"), Found: true},
			{Op: pb.JournalEntry_LTM_REMEMBER, Name: "tone", ArgsDigest: mustHex("227409f326e2d02700ef9fcb08b0f9049f583a398a7b39b507a6e87349cf8862")},
		},
	}
}

func continuationWaiting() proto.Message {
	m := continuationMsg()
	m.Adapter = "beamagents.agent.handler.v1"
	m.PendingIntentIds = nil
	m.StepIndex = 2
	m.SuspendedAtMs = t0 + 180000
	m.DeadlineMs = t0 + 3600000
	m.WakeAtMs = t0 + 3600000
	m.AwaitingSignal = "shipment.signed"
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(handlerJournalWaitsMsg())
	if err != nil {
		panic(err)
	}
	m.Snapshot = snap
	return m
}

// ledgerEntry is the ledger record of traceEventMsg's call, with the tenant, agent and
// version attributes the core adds, priced at 2.5 and 10 per million input and output tokens:
// 412 × 2.5 + 57 × 10 = 1,600 micro-units.
func ledgerEntry() proto.Message {
	ev := traceEventMsg()
	return &pb.LedgerEntry{
		EntityKey: ev.GetEntityKey(), Tenant: "acme", Agent: "support", AgentVersion: "2026-12",
		Seq: ev.GetSeq(), StepIndex: ev.GetStepIndex(), TraceId: ev.GetTraceId(), SpanId: ev.GetSpanId(),
		AttemptSpanId: ev.GetParentSpanId(), EventTimeMs: ev.GetStartMs(),
		RequestModel: "scripted-1", ResponseModel: "scripted-1", InputTokens: 412, OutputTokens: 57,
		CostMicros: 1600, Priced: true,
	}
}
