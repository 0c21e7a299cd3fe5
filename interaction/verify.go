package interaction

import (
	"bytes"

	"google.golang.org/protobuf/types/descriptorpb"
)

// Verify re-derives the schema rooted at rootTypeID from set, independently of wherever
// document came from, and requires document to be that derivation's canonical schema document
// byte for byte (SPX-Z204 bundle.replay otherwise). Derivation failures keep their own codes.
func Verify(document []byte, set *descriptorpb.FileDescriptorSet, rootTypeID string) (*Schema, error) {
	s, err := CompileFileSet(set, rootTypeID)
	if err != nil {
		return nil, err
	}
	if err := s.Verify(document); err != nil {
		return nil, err
	}
	return s, nil
}

// Verify requires document to equal s's canonical schema document byte for byte.
func (s *Schema) Verify(document []byte) error {
	if bytes.Equal(document, s.document) {
		return nil
	}
	return &Error{Code: CodeReplayMismatch, Rule: RuleBundleReplay, Path: "$",
		Message: "the schema document is not the replay of its source (first difference at byte " +
			itoa(firstDifference(string(document), string(s.document))) + ")"}
}
