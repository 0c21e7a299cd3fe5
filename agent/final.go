package agent

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
)

// final emits the final reply: the exact admitted canonical proposal document, LF included,
// becomes the message of the final action {"kind":"final","message":…}. The complete rendered
// action, after escaping, is measured against the bound; a reply over it fails, never
// truncated.
func (act *activation) final(step uint32, val *interaction.Value) error {
	doc := val.Canonical()
	action := RenderFinal(doc)
	if max := act.c.a.limits.MaxFinalBytes; len(action) > max {
		return fail(ReasonFinalTooLarge, nil, "final action is %d bytes after escaping, bound %d", len(action), max)
	}
	act.out.Finals = append(act.out.Finals, &pb.FinalReply{
		EntityKey:    act.c.entity,
		Seq:          act.seq,
		StepIndex:    step,
		CaseId:       val.CaseID(),
		SchemaDigest: act.c.a.def.Schema.Digest(),
		Message:      string(doc),
		ActionJson:   string(action),
		TraceId:      act.tr.id,
		CreatedAtMs:  act.c.now,
	})
	return nil
}

// RenderFinal renders the final action carrying message: {"kind":"final","message":"…"} and a
// terminal LF. The message is escaped as a canonical JSON string: '"', '\' and control
// characters are escaped (\n, \r, \t, \b, \f, else \u00XX); every other byte, UTF-8 included,
// is kept as is.
func RenderFinal(message []byte) []byte {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(message)+32)
	b = append(b, `{"kind":"final","message":"`...)
	for _, ch := range message {
		switch ch {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if ch < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&15])
			} else {
				b = append(b, ch)
			}
		}
	}
	return append(b, "\"}\n"...)
}
