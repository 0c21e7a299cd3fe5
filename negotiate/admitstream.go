package negotiate

import (
	"fmt"

	"github.com/beamagents/beamagents/interaction/stream"
)

// Stream is the push-style admission of one streamed provider text at an Admitter: the
// provider's chunks are pushed as they arrive, each refused at the first byte that proves the
// text can never be admitted (so the provider call can be cancelled there). Acceptance is
// never the stream's: the caller admits the whole text with Admit, so a streamed answer and
// the same answer whole have one Outcome. It is not safe for concurrent use; use one per
// response.
//
// Under a protocol that canonicalizes, each chunk goes through the streaming twin of
// Canonicalize: insignificant whitespace is dropped, strings re-escaped canonically, an
// integer field's JSON number written as its decimal string ("-0" as "0"), and the envelope
// added, so that the streaming decoder (package interaction/stream) judges the canonical
// document as it forms. Nothing is repaired: a value of another type than its field's — a
// number or an object where a string is declared, a string where a bool is — is passed on
// as it is and refused at its first byte. A member key the decoder refuses may only be out of
// declaration order, which Canonicalize would reorder, so from such a key on the stream stops
// refusing early and the admission of the whole text decides. Without canonicalization (FAIL_FAST, or no protocol)
// the chunks go to the decoder verbatim. Chunk boundaries never change an outcome.
type Stream struct {
	m     *Admitter
	dec   *stream.Decoder
	canon *canonStream // nil: the text must be its canonical document verbatim
	text  []byte
	err   error // the refusal of an earlier push
}

// NewStream starts the push-style admission of one provider text. It fails, for every text,
// with stream.ErrUnstreamable when the schema's documents cannot be decoded as a stream (see
// Streamable).
func (m *Admitter) NewStream() (*Stream, error) {
	if m.streamErr != nil {
		return nil, m.streamErr
	}
	s := &Stream{m: m, dec: m.grammar.NewDecoder()}
	if m.canonicalizes() {
		s.canon = newCanonStream(m.schema, s.dec)
	}
	return s, nil
}

// Streamable returns why the admitter cannot admit texts push-style (a schema one of whose
// documents could exceed the streaming decoder's string-token bound), or nil.
func (m *Admitter) Streamable() error { return m.streamErr }

// Push takes the next chunk of the text. It returns nil while the text so far can still be
// admitted as far as the stream can tell, and a *stream.Refusal (a STREAM-* code and the
// offset of the refused byte in the decoder's document) at the first chunk that proves it
// cannot; from then on it returns that refusal again.
func (s *Stream) Push(chunk []byte) error {
	if s.err != nil {
		return s.err
	}
	if len(s.text)+len(chunk) > MaxInputBytes {
		s.err = &stream.Refusal{Code: stream.CodeBytes, AtByte: s.dec.Buffered(),
			Message: fmt.Sprintf("the text exceeds %d bytes", MaxInputBytes)}
		return s.err
	}
	s.text = append(s.text, chunk...)
	var o stream.Outcome
	if s.canon != nil {
		o = s.canon.push(chunk)
	} else {
		o = s.dec.Push(chunk)
	}
	if o.State() == stream.Refused {
		s.err = o.Refusal()
	}
	return s.err
}

// Buffered returns how many bytes of the decoder's document (the canonical form under a
// protocol that canonicalizes) the streaming decoder has received.
func (s *Stream) Buffered() int { return s.dec.Buffered() }
