package agent

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// final emits the final reply: the exact admitted canonical proposal document, LF included,
// becomes the message of the final action {"kind":"final","message":…}. The complete rendered
// action, after escaping, is measured against the bound; a reply over it fails, never
// truncated.
// The bridge from an admitted proposal to the final action is described in
// docs/final-action.md.
func (act *activation) final(step uint32, val *interaction.Value) error {
	doc := val.CanonicalString()
	action := renderFinal(doc)
	if max := act.c.a.limits.MaxFinalBytes; len(action) > max {
		return fail(ReasonFinalTooLarge, nil, "final action is %d bytes after escaping, bound %d", len(action), max)
	}
	act.out.Finals = append(act.out.Finals, &pb.FinalReply{
		EntityKey:    act.c.entity,
		Seq:          act.seq,
		StepIndex:    step,
		CaseId:       val.CaseID(),
		SchemaDigest: act.c.a.def.Schema.Digest(),
		Message:      doc,
		ActionJson:   string(action),
		TraceId:      act.tr.id,
		CreatedAtMs:  act.c.now,
	})
	return nil
}

// renderFinal renders the final action carrying message: {"kind":"final","message":"…"} and a
// terminal LF. The message (valid UTF-8: an admitted document) is written as a canonical JSON
// string, by the same writer as every canonical document of the runtime: '"', '\' and
// control characters escaped (\n, \r, \t, \b, \f, else \u00xx), every other byte as is.
func renderFinal(message string) []byte {
	b := make([]byte, 0, len(message)+len(message)/4+32) // a document escapes each of its quotes: about one byte in six
	b = append(b, `{"kind":"final","message":`...)
	b = canonjson.AppendString(b, message)
	return append(b, "}\n"...)
}
