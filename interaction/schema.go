package interaction

import (
	"bytes"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// Format names of the two documents this package reads and writes.
const (
	SchemaFormat = "beam_agents.interaction-schema.v1" // the canonical schema document
	ValueFormat  = "beam_agents.interaction-value.v1"  // one value document
)

// Schema is a compiled interaction schema. It is immutable and safe for concurrent use.
type Schema struct {
	root     *Type
	types    []*Type
	document []byte
	revision string
	digest   string
	provider []byte
	// presented is the presented projection (CompilePresented), nil otherwise.
	presented       []byte
	presentedDigest string
	// valuePrefix is the canonical envelope up to the value:
	// {"schema":…,"root_type_id":…,"schema_digest":…,"value":
	valuePrefix string
}

func newSchema(root *Type, order []*Type) (*Schema, error) {
	s := &Schema{root: root, types: order}
	if err := s.renderDocument(); err != nil {
		return nil, err
	}
	if err := s.renderProvider(); err != nil {
		return nil, err
	}
	s.valuePrefix = string(canonjson.AppendValuePrefix(nil, ValueFormat, root.id, s.digest))
	return s, nil
}

// Root returns the root type.
func (s *Schema) Root() *Type { return s.root }

// RootTypeID returns the root type's stable id.
func (s *Schema) RootTypeID() string { return s.root.id }

// RootTypeRevision returns "sha256:<hex>", the structural identity of the type graph: it
// changes with any added, removed or reordered field or case, changed representation, bound
// or nested type, and never with a display rename or a protobuf field renumbering.
func (s *Schema) RootTypeRevision() string { return s.revision }

// Digest returns "sha256:<hex>" over the complete canonical schema document; value documents
// name it in their schema_digest member.
func (s *Schema) Digest() string { return s.digest }

// Document returns a copy of the canonical schema document (terminal LF included).
func (s *Schema) Document() []byte { return bytes.Clone(s.document) }

// ProviderJSONSchema returns a copy of the JSON Schema (draft 2020-12) projection of the value
// document (terminal LF included). See doc.go for what it describes and what it cannot.
func (s *Schema) ProviderJSONSchema() []byte { return bytes.Clone(s.provider) }

// Types returns the types in dependency-first order (a fresh slice).
func (s *Schema) Types() []*Type { return append([]*Type(nil), s.types...) }
