package interaction

// Reference and Recognize expose Decode's two paths to the tests, which check that they
// admit the same documents with the same values.
func (s *Schema) Reference(text string) (*Value, error) { return s.reference(text) }
func (s *Schema) Recognize(text string) *Value          { return s.recognize(text) }

// What only the tests read.
var (
	ParseInt = parseInt
	UintOf   = uintOf
)

func (t *Type) Height() int                        { return t.height }
func (t *Type) FieldByID(id string) (*Field, bool) { return t.fields.byID(id) }
func (s *Schema) NumTypes() int                    { return len(s.types) }
func (s *Schema) Type(i int) *Type                 { return s.types[i] }
func (c *Case) FieldByID(id string) (*Field, bool) { return c.fields.byID(id) }
