package migrate_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

func noop(protoreflect.Message) error { return nil }

// completeSteps returns one no-op step per versioned message per version below current.
func completeSteps(current uint32) []migrate.Step {
	var s []migrate.Step
	for _, n := range migrate.Versioned() {
		for from := uint32(0); from < current; from++ {
			s = append(s, migrate.Step{Message: n, From: from, Apply: noop})
		}
	}
	return s
}

func TestNewRegistryRefusesInconsistentChains(t *testing.T) {
	const mem = "beam_agents.v1.MemoryBlob"
	tests := []struct {
		name    string
		current uint32
		steps   []migrate.Step
		ok      bool
	}{
		{"complete chain to 1", 1, completeSteps(1), true},
		{"complete chain to 3", 3, completeSteps(3), true},
		{"current version 0", 0, nil, false},
		{"no steps at all", 1, nil, false},
		{"gap in the chain", 3, completeSteps(3)[1:], false},
		{"one message missing", 2, completeSteps(2)[2:], false},
		{"duplicate step", 1, append(completeSteps(1), migrate.Step{Message: mem, From: 0, Apply: noop}), false},
		{"step at current", 1, append(completeSteps(1), migrate.Step{Message: mem, From: 1, Apply: noop}), false},
		{"nil Apply", 1, append(completeSteps(1)[1:], migrate.Step{Message: mem, From: 0}), false},
		{"wire message ToolIntent", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.ToolIntent", From: 0, Apply: noop}), false},
		{"wire message ToolResult", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.ToolResult", From: 0, Apply: noop}), false},
		{"wire message TraceEvent", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.TraceEvent", From: 0, Apply: noop}), false},
		{"wire message AgentEnvelope", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.AgentEnvelope", From: 0, Apply: noop}), false},
		{"wire message ActivationErrorRecord", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.ActivationErrorRecord", From: 0, Apply: noop}), false},
		{"snapshot envelope", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.StateSnapshot", From: 0, Apply: noop}), false},
		{"entry message", 1, append(completeSteps(1), migrate.Step{Message: "beam_agents.v1.MemoryEntry", From: 0, Apply: noop}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := migrate.NewRegistry(tc.current, tc.steps...)
			if tc.ok {
				if err != nil || r.Current() != tc.current {
					t.Fatalf("NewRegistry: %v", err)
				}
				return
			}
			if !errors.Is(err, migrate.ErrRegistry) || r != nil {
				t.Fatalf("NewRegistry = %v, %v; want ErrRegistry", r, err)
			}
		})
	}
}

// Completeness of the shipped chain: every versioned message has a step from every version
// below current (the golden side, a frozen golden/v<N>/ per version, is checked in golden/).
func TestDefaultChainIsComplete(t *testing.T) {
	if migrate.CurrentStateSchemaVersion != 1 {
		t.Fatalf("CurrentStateSchemaVersion = %d; a bump needs its steps, goldens and this test updated together", migrate.CurrentStateSchemaVersion)
	}
	if migrate.Default().Current() != migrate.CurrentStateSchemaVersion {
		t.Fatalf("default registry migrates to %d", migrate.Default().Current())
	}
	have := map[protoreflect.FullName]map[uint32]int{}
	for _, s := range migrate.Steps() {
		if have[s.Message] == nil {
			have[s.Message] = map[uint32]int{}
		}
		have[s.Message][s.From]++
	}
	for _, n := range migrate.Versioned() {
		for from := uint32(0); from < migrate.CurrentStateSchemaVersion; from++ {
			if have[n][from] != 1 {
				t.Errorf("%s: %d steps from %d, want exactly 1", n, have[n][from], from)
			}
		}
	}
	if len(migrate.Steps()) != len(migrate.Versioned())*int(migrate.CurrentStateSchemaVersion) {
		t.Errorf("%d steps registered, want %d", len(migrate.Steps()), len(migrate.Versioned())*int(migrate.CurrentStateSchemaVersion))
	}
}

// Every top-level message of the schema is classified, so a new message cannot silently become
// migratable: versioned messages carry the stamp, the others can never get a bump.
func TestEveryMessageIsClassified(t *testing.T) {
	versioned := map[protoreflect.FullName]bool{}
	for _, n := range migrate.Versioned() {
		versioned[n] = true
	}
	if len(versioned) != 3 {
		t.Fatalf("Versioned() = %v, want exactly MemoryBlob, Continuation, LlmCacheBlob", migrate.Versioned())
	}
	wire := map[protoreflect.Name]bool{
		"ToolIntent": true, "ToolResult": true, "TraceEvent": true, "AgentEnvelope": true,
		"ActivationErrorRecord": true, "StateSnapshot": true, "MemoryEntry": true, "LlmCacheEntry": true,
	}
	msgs := pb.File_beam_agents_v1_beam_agents_proto.Messages()
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		stamp := md.Fields().ByName("state_schema_version")
		switch {
		case versioned[md.FullName()]:
			if stamp == nil || stamp.Number() != 1 || stamp.Kind() != protoreflect.Uint32Kind {
				t.Errorf("%s: versioned without field 1 uint32 state_schema_version", md.FullName())
			}
		case wire[md.Name()]:
			m := dynamicMessage(md)
			if _, err := migrate.Migrate(m); !errors.Is(err, migrate.ErrUnversioned) {
				t.Errorf("%s: Migrate = %v, want ErrUnversioned", md.FullName(), err)
			}
			if md.Name() != "StateSnapshot" && stamp != nil {
				t.Errorf("%s: a wire message carries state_schema_version", md.FullName())
			}
		default:
			t.Errorf("%s is not classified as versioned or wire", md.FullName())
		}
	}
}

func dynamicMessage(md protoreflect.MessageDescriptor) proto.Message {
	for _, m := range []proto.Message{&pb.ToolIntent{}, &pb.ToolResult{}, &pb.TraceEvent{}, &pb.AgentEnvelope{},
		&pb.ActivationErrorRecord{}, &pb.StateSnapshot{StateSchemaVersion: 1}, &pb.MemoryEntry{}, &pb.LlmCacheEntry{}} {
		if m.ProtoReflect().Descriptor() == md {
			return m
		}
	}
	panic(md.FullName())
}

func TestMigrate(t *testing.T) {
	tests := []struct {
		name    string
		in      proto.Message
		want    migrate.Result
		wantErr error
	}{
		{"memory v0 is pre-versioned", &pb.MemoryBlob{Entries: []*pb.MemoryEntry{{Key: "a"}}}, migrate.Result{From: 0, To: 1}, nil},
		{"continuation v0 is pre-versioned", &pb.Continuation{Seq: 3}, migrate.Result{From: 0, To: 1}, nil},
		{"cache v0 is pre-versioned", &pb.LlmCacheBlob{}, migrate.Result{From: 0, To: 1}, nil},
		{"memory v1 unchanged", &pb.MemoryBlob{StateSchemaVersion: 1}, migrate.Result{From: 1, To: 1}, nil},
		{"continuation v1 unchanged", &pb.Continuation{StateSchemaVersion: 1}, migrate.Result{From: 1, To: 1}, nil},
		{"cache v1 unchanged", &pb.LlmCacheBlob{StateSchemaVersion: 1}, migrate.Result{From: 1, To: 1}, nil},
		{"memory v2 refused", &pb.MemoryBlob{StateSchemaVersion: 2}, migrate.Result{}, migrate.ErrFutureVersion},
		{"continuation max version refused", &pb.Continuation{StateSchemaVersion: 1<<32 - 1}, migrate.Result{}, migrate.ErrFutureVersion},
		{"cache v7 refused", &pb.LlmCacheBlob{StateSchemaVersion: 7}, migrate.Result{}, migrate.ErrFutureVersion},
		{"nil interface", nil, migrate.Result{}, migrate.ErrUnversioned},
		{"nil typed pointer", (*pb.MemoryBlob)(nil), migrate.Result{}, migrate.ErrUnversioned},
		{"tool intent", &pb.ToolIntent{}, migrate.Result{}, migrate.ErrUnversioned},
		{"snapshot envelope", &pb.StateSnapshot{StateSchemaVersion: 0}, migrate.Result{}, migrate.ErrUnversioned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before proto.Message
			if tc.in != nil && tc.in.ProtoReflect().IsValid() {
				before = proto.Clone(tc.in)
			}
			got, err := migrate.Migrate(tc.in)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("result = %+v, want %+v", got, tc.want)
			}
			if before == nil {
				return
			}
			if err != nil {
				if !proto.Equal(before, tc.in) {
					t.Fatal("a refused message was modified")
				}
				return
			}
			if v, _ := migrate.Version(tc.in); v != migrate.CurrentStateSchemaVersion {
				t.Fatalf("version after migration = %d", v)
			}
			// Only the stamp changes.
			br := before.ProtoReflect()
			br.Set(br.Descriptor().Fields().ByNumber(1), protoreflect.ValueOfUint32(migrate.CurrentStateSchemaVersion))
			if !proto.Equal(before, tc.in) {
				t.Fatal("migration 0→1 changed more than the version stamp")
			}
		})
	}
}

func TestVersion(t *testing.T) {
	if v, err := migrate.Version(&pb.Continuation{StateSchemaVersion: 9}); v != 9 || err != nil {
		t.Fatalf("Version = %d, %v", v, err)
	}
	if _, err := migrate.Version(&pb.ToolResult{}); !errors.Is(err, migrate.ErrUnversioned) {
		t.Fatalf("Version(ToolResult) err = %v", err)
	}
}

func TestErrorsMatchByCodeNotText(t *testing.T) {
	err := error(&migrate.Error{Code: migrate.CodeFutureVersion, Message: "beam_agents.v1.MemoryBlob", Version: 4, Current: 1})
	if !errors.Is(err, migrate.ErrFutureVersion) || errors.Is(err, migrate.ErrStepFailed) {
		t.Fatal("errors.Is must match on Code only")
	}
	if err.Error() == "" {
		t.Fatal("empty message")
	}
	inner := errors.New("inner")
	step := error(&migrate.Error{Code: migrate.CodeStepFailed, Err: inner})
	if !errors.Is(step, inner) {
		t.Fatal("a step error must unwrap to the step's own error")
	}
}
