package migrate

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A Step upgrades one versioned message from version From to From+1. Apply receives a decoded
// message of the current descriptor (generated or dynamic) and rewrites its fields in place;
// the registry stamps From+1 afterwards, so Apply never touches the version. Apply must be
// deterministic and must not retain the message.
type Step struct {
	Message protoreflect.FullName
	From    uint32
	Apply   func(protoreflect.Message) error
}

type stepKey struct {
	name protoreflect.FullName
	from uint32
}

// A Registry holds the complete chain of steps of every versioned message up to one current
// version. It is immutable and safe for concurrent use.
type Registry struct {
	current uint32
	steps   map[stepKey]func(protoreflect.Message) error
}

// NewRegistry builds a registry migrating to current. It refuses (with [ErrRegistry]) a step
// for a message outside [Versioned], a step at or above current, a duplicate step, a nil
// Apply, and a chain with a gap: every versioned message needs a step from each of
// 0 … current-1.
func NewRegistry(current uint32, steps ...Step) (*Registry, error) {
	if current == 0 {
		return nil, registryErr("current version must be at least 1")
	}
	r := &Registry{current: current, steps: make(map[stepKey]func(protoreflect.Message) error)}
	for _, s := range steps {
		if err := r.add(s); err != nil {
			return nil, err
		}
	}
	for _, name := range versioned {
		for from := uint32(0); from < current; from++ {
			if r.steps[stepKey{name, from}] == nil {
				return nil, &Error{Code: CodeRegistry, Message: name, Version: from,
					Detail: fmt.Sprintf("no step %d→%d", from, from+1)}
			}
		}
	}
	return r, nil
}

func (r *Registry) add(s Step) error {
	switch k := (stepKey{s.Message, s.From}); {
	case !isVersioned(s.Message):
		return &Error{Code: CodeRegistry, Message: s.Message, Detail: "steps exist only for versioned keyed-state messages"}
	case s.From >= r.current:
		return &Error{Code: CodeRegistry, Message: s.Message, Version: s.From,
			Detail: fmt.Sprintf("step from %d reaches beyond current version %d", s.From, r.current)}
	case s.Apply == nil:
		return &Error{Code: CodeRegistry, Message: s.Message, Version: s.From, Detail: "nil Apply"}
	case r.steps[k] != nil:
		return &Error{Code: CodeRegistry, Message: s.Message, Version: s.From, Detail: "duplicate step"}
	default:
		r.steps[k] = s.Apply
		return nil
	}
}

// Current returns the version the registry migrates to.
func (r *Registry) Current() uint32 { return r.current }

// Result says what a migration did.
type Result struct {
	From uint32 // the version the message was decoded at
	To   uint32 // the version it has now (the registry's current version)
}

// Migrated reports whether any step ran.
func (r Result) Migrated() bool { return r.From != r.To }

// PreVersioned reports whether the message was decoded at version 0.
func (r Result) PreVersioned() bool { return r.From == 0 }

// Migrate upgrades m in place to the registry's current version. A message already at the
// current version is left unchanged. On error m is left exactly as it was: [ErrUnversioned]
// for a message outside [Versioned], [ErrFutureVersion] for a version above current,
// [ErrStepFailed] when a step refuses.
func (r *Registry) Migrate(m proto.Message) (Result, error) {
	msg, fd, err := versionOf(m)
	if err != nil {
		return Result{}, err
	}
	name := msg.Descriptor().FullName()
	v := uint32(msg.Get(fd).Uint())
	switch {
	case v == r.current:
		return Result{From: v, To: v}, nil
	case v > r.current:
		return Result{}, &Error{Code: CodeFutureVersion, Message: name, Version: v, Current: r.current}
	}
	// Steps run on a copy so that a failing step cannot leave m half migrated.
	work := proto.Clone(m)
	wr := work.ProtoReflect()
	for from := v; from < r.current; from++ {
		if err := r.steps[stepKey{name, from}](wr); err != nil {
			return Result{}, &Error{Code: CodeStepFailed, Message: name, Version: from, Current: r.current, Err: err}
		}
		wr.Set(fd, protoreflect.ValueOfUint32(from+1))
	}
	proto.Reset(m)
	proto.Merge(m, work)
	return Result{From: v, To: r.current}, nil
}
