package migrate

import (
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// CurrentStateSchemaVersion is the state_schema_version this binary writes and migrates to.
const CurrentStateSchemaVersion uint32 = 1

// versionFieldName and versionFieldNumber locate the version stamp, field 1 of every versioned
// message in every version.
const (
	versionFieldName   protoreflect.Name        = "state_schema_version"
	versionFieldNumber protoreflect.FieldNumber = 1
)

// versioned is closed: these three, and only these, may ever take a breaking change.
var (
	memoryBlob   = (*pb.MemoryBlob)(nil).ProtoReflect().Descriptor().FullName()
	continuation = (*pb.Continuation)(nil).ProtoReflect().Descriptor().FullName()
	llmCacheBlob = (*pb.LlmCacheBlob)(nil).ProtoReflect().Descriptor().FullName()
	versioned    = []protoreflect.FullName{memoryBlob, continuation, llmCacheBlob}
)

// Versioned returns the full names of the versioned keyed-state messages, in a fixed order.
func Versioned() []protoreflect.FullName { return slices.Clone(versioned) }

func isVersioned(name protoreflect.FullName) bool { return slices.Contains(versioned, name) }

// Version returns the state_schema_version of a versioned message.
func Version(m proto.Message) (uint32, error) {
	r, fd, err := versionOf(m)
	if err != nil {
		return 0, err
	}
	return uint32(r.Get(fd).Uint()), nil
}

// versionOf checks that m is a versioned message whose descriptor (generated or dynamic) has
// the version stamp, and returns its reflection and the stamp's field.
func versionOf(m proto.Message) (protoreflect.Message, protoreflect.FieldDescriptor, error) {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil, nil, &Error{Code: CodeUnversioned, Detail: "nil message"}
	}
	r := m.ProtoReflect()
	md := r.Descriptor()
	if !isVersioned(md.FullName()) {
		return nil, nil, &Error{Code: CodeUnversioned, Message: md.FullName(),
			Detail: "not a versioned keyed-state message; wire messages evolve additively only"}
	}
	fd := md.Fields().ByNumber(versionFieldNumber)
	if fd == nil || fd.Name() != versionFieldName || fd.Kind() != protoreflect.Uint32Kind || fd.Cardinality() == protoreflect.Repeated {
		return nil, nil, &Error{Code: CodeUnversioned, Message: md.FullName(),
			Detail: "descriptor lacks field 1 uint32 state_schema_version"}
	}
	return r, fd, nil
}
