package negotiate

import (
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// DialectDigest exposes the producer digest of the model boundary to the receipt tests.
var DialectDigest = dialectDigest

// Degraded reports that a member key was refused and the stream stopped refusing early.
func (s *Stream) Degraded() bool { return s.canon != nil && s.canon.degraded }

// DecoderFinish ends the streaming decoder's document without admitting the text whole: the
// streaming decoder's own verdict.
func (s *Stream) DecoderFinish() stream.Outcome {
	if s.err != nil {
		return s.dec.Finish()
	}
	if s.canon != nil {
		return s.canon.finish()
	}
	return s.dec.Finish()
}

// Finish ends the text and admits it whole, as the runtime does with Admit: the same value, document,
// receipt and error. After a refused push it returns that refusal with a non-conforming
// receipt.
func (s *Stream) Finish() (Outcome, error) {
	if s.err != nil {
		return s.m.receipt(canonjson.Digest(outputDomain, s.text), s.m.transform).refused(s.err)
	}
	return s.m.Admit(s.text)
}
