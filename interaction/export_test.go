package interaction

// Reference and Recognize expose Decode's two paths to the tests, which check that they
// admit the same documents with the same values.
func (s *Schema) Reference(text string) (*Value, error) { return s.reference(text) }
func (s *Schema) Recognize(text string) *Value          { return s.recognize(text) }
