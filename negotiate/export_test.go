package negotiate

import "github.com/beamagents/beamagents/interaction/stream"

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
