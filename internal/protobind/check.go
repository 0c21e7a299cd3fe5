package protobind

import (
	"errors"

	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/interaction"
)

// Refusal is a message that declares a type_id but that package interaction refuses as a
// schema: the runtime would refuse it too, when an agent or a tool is built on it.
type Refusal struct {
	File    string                // the .proto name
	Message protoreflect.FullName // the message declaring the type_id
	Err     *interaction.Error    // its diagnostic (Code SPX-…, Rule, Element)
}

// Check compiles, as an interaction schema root, every message of files (nested ones
// included) that declares a (beam_agents.v1.type_id), in declaration order, and returns the
// ones refused.
func Check(files linker.Files) []Refusal {
	var out []Refusal
	var walk func(file string, mds protoreflect.MessageDescriptors)
	walk = func(file string, mds protoreflect.MessageDescriptors) {
		for i := 0; i < mds.Len(); i++ {
			md := mds.Get(i)
			if _, ok := interaction.DeclaredTypeID(md); ok {
				if err := compileSchema(md); err != nil {
					out = append(out, Refusal{File: file, Message: md.FullName(), Err: err})
				}
			}
			walk(file, md.Messages())
		}
	}
	for _, f := range files {
		walk(f.Path(), f.Messages())
	}
	return out
}

func compileSchema(md protoreflect.MessageDescriptor) *interaction.Error {
	_, err := interaction.Compile(md)
	if err == nil {
		return nil
	}
	var ie *interaction.Error
	if errors.As(err, &ie) {
		return ie
	}
	return &interaction.Error{Code: interaction.CodeUnsupportedSource, Rule: interaction.RuleSourceDescriptor, Element: string(md.FullName()), Message: err.Error()}
}
