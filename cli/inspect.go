package cli

import (
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "inspect", summary: "print a binary beam_agents.v1 blob as protojson", run: runInspect})
}

func runInspect(e *env, args []string) int {
	fs := newFlags(e, "inspect", "inspect --type MessageName FILE")
	typ := fs.String("type", "", "message name, e.g. ToolIntent or beam_agents.v1.ToolIntent")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *typ == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	mt, err := lookupMessage(*typ)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	data, err := records.ReadCapped(fs.Arg(0), records.MaxFileBytes)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if got, _, _ := records.Split(data); got != "" {
		return inspectRecords(e, fs.Arg(0), data, mt)
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(data, m); err != nil {
		e.errorf("%s does not parse as %s: %v", fs.Arg(0), mt.Descriptor().FullName(), err)
		return 1
	}
	if n := len(m.ProtoReflect().GetUnknown()); n > 0 {
		e.errorf("note: %d bytes of fields unknown to this binary are kept but not shown", n)
	}
	out, err := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	e.stdout.Write(append(out, '\n'))
	return 0
}

// inspectRecords prints each record of a typed record file as protojson, refusing a file of
// another type than --type.
func inspectRecords(e *env, file string, data []byte, mt protoreflect.MessageType) int {
	recs, err := records.Records(file, data, mt.Descriptor().FullName())
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	for i, r := range recs {
		m := mt.New().Interface()
		if err := proto.Unmarshal(r, m); err != nil {
			e.errorf("%s: record %d does not parse as %s: %v", file, i+1, mt.Descriptor().FullName(), err)
			return 1
		}
		out, err := protojson.MarshalOptions{Multiline: true}.Marshal(m)
		if err != nil {
			e.errorf("%v", err)
			return 1
		}
		e.stdout.Write(append(out, '\n'))
	}
	return 0
}

// lookupMessage resolves a bare name in package beam_agents.v1, or a full name.
func lookupMessage(name string) (protoreflect.MessageType, error) {
	full := protoreflect.FullName(name)
	if !strings.Contains(name, ".") || !strings.HasPrefix(name, "beam_agents.") {
		if mt, err := protoregistry.GlobalTypes.FindMessageByName("beam_agents.v1." + full); err == nil {
			return mt, nil
		}
	}
	return protoregistry.GlobalTypes.FindMessageByName(full)
}
