package interaction

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// optionTypes resolves exactly the interaction options. Options are re-read through it
// because a descriptor may carry them as known extensions (generated code), as unknown
// fields (a descriptor set parsed without them registered) or as dynamic extensions (a
// compiler's own option interpretation); re-parsing the serialized options treats all alike.
var optionTypes = func() *protoregistry.Types {
	t := new(protoregistry.Types)
	for _, x := range []protoreflect.ExtensionType{pb.E_TypeId, pb.E_FieldId, pb.E_MaxBytes, pb.E_Minimum, pb.E_Maximum} {
		if err := t.RegisterExtension(x); err != nil {
			panic(err)
		}
	}
	return t
}()

// reparse copies opts into a fresh dst with the interaction options resolved.
func reparse(opts proto.Message, dst proto.Message) bool {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return false
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return false
	}
	return proto.UnmarshalOptions{Resolver: optionTypes, AllowPartial: true}.Unmarshal(b, dst) == nil
}

// DeclaredTypeID returns the (beam_agents.v1.type_id) option of md and whether md declares
// one, however the descriptor carries its options (generated code, a descriptor set, a
// compiler's own descriptors). A message that declares one is meant to be a schema: Compile
// says whether it is admitted.
func DeclaredTypeID(md protoreflect.MessageDescriptor) (string, bool) { return messageTypeID(md) }

// messageTypeID returns the type_id option and whether it is set.
func messageTypeID(md protoreflect.MessageDescriptor) (string, bool) {
	var o descriptorpb.MessageOptions
	if !reparse(md.Options(), &o) || !proto.HasExtension(&o, pb.E_TypeId) {
		return "", false
	}
	return proto.GetExtension(&o, pb.E_TypeId).(string), true
}

// fieldOptions are the interaction options of one field; nil pointers are unset options.
type fieldOptions struct {
	id       *string
	maxBytes *uint32
	minimum  *string
	maximum  *string
}

func readFieldOptions(fd protoreflect.FieldDescriptor) fieldOptions {
	var o descriptorpb.FieldOptions
	var r fieldOptions
	if !reparse(fd.Options(), &o) {
		return r
	}
	if proto.HasExtension(&o, pb.E_FieldId) {
		r.id = proto.String(proto.GetExtension(&o, pb.E_FieldId).(string))
	}
	if proto.HasExtension(&o, pb.E_MaxBytes) {
		r.maxBytes = proto.Uint32(proto.GetExtension(&o, pb.E_MaxBytes).(uint32))
	}
	if proto.HasExtension(&o, pb.E_Minimum) {
		r.minimum = proto.String(proto.GetExtension(&o, pb.E_Minimum).(string))
	}
	if proto.HasExtension(&o, pb.E_Maximum) {
		r.maximum = proto.String(proto.GetExtension(&o, pb.E_Maximum).(string))
	}
	return r
}
