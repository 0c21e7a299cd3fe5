package stream

// GrammarWork exposes the grammar's work so far to the tests that bound it: one unit per byte
// plus one per case-table comparison, at most MaxGrammarWork.
func (d *Decoder) GrammarWork() int {
	d.sync() // a fast run's work is known once its bytes have been added to the state
	return d.m.work
}
