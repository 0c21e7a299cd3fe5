package tool

import (
	"regexp"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
)

// argsFile assembles the protobuf descriptor of a tool's argument records, one message per
// record, and compiles it: the one path from a declaration (a JSON Schema, a Go struct) to
// an interaction.Schema, so every declared schema is the same kind of closed schema as one
// compiled from a .proto. Stable ids are typeID for the root and typeID + "." + property,
// dotted through nested records, for fields; a nested record's type id is its field's id.
type argsFile struct {
	typeID string
	msgs   []*descriptorpb.DescriptorProto
	// docs are the fields' descriptions, as the leading comments of the file's source info.
	docs []*descriptorpb.SourceCodeInfo_Location
}

// identRE is the property names admitted: identifiers every provider and Go's JSON accept.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func protoPackage(typeID string) string {
	var sb strings.Builder
	sb.WriteString("beamagents.tools.")
	for _, r := range typeID {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// record appends the message name with type id id; its fields are appended to it.
func (b *argsFile) record(id, name string) *descriptorpb.DescriptorProto {
	opts := &descriptorpb.MessageOptions{}
	proto.SetExtension(opts, pb.E_TypeId, id)
	m := &descriptorpb.DescriptorProto{Name: proto.String(name), Options: opts}
	b.msgs = append(b.msgs, m)
	return m
}

// newField returns a singular field of property prop with stable id id, numbered num; its type
// and bounds are set by the caller.
func (b *argsFile) newField(id, prop string, num int32) *descriptorpb.FieldDescriptorProto {
	opts := &descriptorpb.FieldOptions{}
	proto.SetExtension(opts, pb.E_FieldId, id)
	return &descriptorpb.FieldDescriptorProto{
		Name: proto.String(prop), Number: proto.Int32(num), JsonName: proto.String(prop),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Options: opts,
	}
}

// nestedName is the message name of owner's nested record prop.
func nestedName(owner, prop string) string { return owner + "_" + prop }

// nest makes f a field of the nested record message name.
func (b *argsFile) nest(f *descriptorpb.FieldDescriptorProto, name string) {
	f.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	f.TypeName = proto.String("." + protoPackage(b.typeID) + "." + name)
}

// setRange bounds an integer field (canonical decimal strings).
func setRange(f *descriptorpb.FieldDescriptorProto, lo, hi string) {
	proto.SetExtension(f.Options, pb.E_Minimum, lo)
	proto.SetExtension(f.Options, pb.E_Maximum, hi)
}

// setMaxBytes bounds a string or bytes field.
func setMaxBytes(f *descriptorpb.FieldDescriptorProto, n uint32) {
	proto.SetExtension(f.Options, pb.E_MaxBytes, n)
}

// describe records text as the description of field fieldIndex of message m (its leading
// comment), which a presented schema shows the model.
func (b *argsFile) describe(m *descriptorpb.DescriptorProto, fieldIndex int, text string) {
	mi := -1
	for i, x := range b.msgs {
		if x == m {
			mi = i
		}
	}
	b.docs = append(b.docs, &descriptorpb.SourceCodeInfo_Location{
		Path: []int32{4, int32(mi), 2, int32(fieldIndex)}, Span: []int32{0, 0, 0}, LeadingComments: proto.String(text),
	})
}

// compile builds the file and compiles its message root; presented compiles it to be shown to
// a model by property names (interaction.CompilePresented).
func (b *argsFile) compile(root string, presented bool) (*interaction.Schema, error) {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("beamagents/tools/" + b.typeID + ".proto"),
		Package:     proto.String(protoPackage(b.typeID)),
		Syntax:      proto.String("proto3"),
		Dependency:  []string{"beam_agents/v1/interaction_options.proto"},
		MessageType: b.msgs,
	}
	if len(b.docs) > 0 {
		fdp.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: b.docs}
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		return nil, declErr(b.typeID, err, "derived descriptor does not build")
	}
	compile := interaction.Compile
	if presented {
		compile = interaction.CompilePresented
	}
	s, err := compile(fd.Messages().ByName(protoreflect.Name(root)))
	if err != nil {
		return nil, declErr(b.typeID, err, "derived schema does not compile")
	}
	return s, nil
}
